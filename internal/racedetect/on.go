//go:build race

package racedetect

// Enabled: the binary was built with the race detector.
const Enabled = true
