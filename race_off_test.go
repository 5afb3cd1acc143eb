//go:build !race

package wield

const raceEnabled = false
