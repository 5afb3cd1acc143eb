//go:build !linux

package sqlite

import (
	"testing"
	"time"
)

// cpuTime reads a thread's CPU time only on Linux (RUSAGE_THREAD); elsewhere
// BenchmarkWrite reports ns/op alone and writer-cpu-µs/record as 0.
func cpuTime(*testing.B) time.Duration { return 0 }
