//go:build race

package jsondec

// raceEnabled: under the race detector sync.Pool drops a share of what is
// put back, on purpose, so counts of allocations measure the detector,
// not the code; the tests that count them skip the count.
const raceEnabled = true
