//go:build race

package sqlite_test

// raceEnabled: the race detector's shadow memory is anonymous memory that
// Go's own accounting does not see, so memory tests cannot measure.
const raceEnabled = true
