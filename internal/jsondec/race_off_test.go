//go:build !race

package jsondec

const raceEnabled = false
