//go:build !race

package mcpbridge_test

const raceEnabled = false
