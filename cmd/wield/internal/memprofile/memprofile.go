// Package memprofile turns off the Go runtime's sampling of allocations
// for the heap profile in a wield process that cannot serve that profile:
// one started without --pprof, the only way to read it (wield writes no
// profile of its own). Imported by package main for this side effect.
//
// The sampling (one allocation in every 512 KiB, by default) records each
// sample's call stack, and unwinding a stack reads the entries of the
// binary's function table for every function on it: about 22 of the page
// faults of an idle server's start were those walks (`perf record -e
// page-faults`), and with this package .gopclntab's resident part at idle
// went from 6.6 to 6.1 MB (other walks touch some of the same pages);
// under load the profile's hash table and buckets hold memory of their own. The setting
// is made in a package init rather than in main, so that the allocations
// of the package inits that run after this one are not sampled either: Go
// initializes, among the packages whose imports are ready, the one first
// by import path, and this one needs only os and runtime.
package memprofile

import (
	"os"
	"runtime"
	"strings"
)

func init() {
	if !Wanted(os.Args[1:]) {
		runtime.MemProfileRate = 0
	}
}

// Wanted tells whether a command line asks for Go's profiles: it holds
// --pprof, as a flag of its own or with its value after "=". A word after
// "--" is an argument, not a flag; an argument that happens to be
// "--pprof" keeps the sampling on, which costs nothing but memory.
func Wanted(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--pprof" || strings.HasPrefix(a, "--pprof=") {
			return true
		}
	}
	return false
}
