//go:build !race

// Package racedetect tells tests whether the race detector is on, for the
// figures it changes: under it sync.Pool drops a share of what is put back
// on purpose (so counts of allocations measure the detector, not the code),
// and its shadow memory is anonymous memory Go's own accounting does not
// see (so memory figures cannot be measured).
package racedetect

// Enabled: the binary was built with the race detector.
const Enabled = false
