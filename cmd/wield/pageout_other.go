//go:build !linux

package main

// releaseStartPages does nothing off Linux (see pageout_linux.go).
func releaseStartPages() (int64, error) { return 0, nil }
