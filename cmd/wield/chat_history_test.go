package main

import (
	"strings"
	"testing"
)

// TestMaxHistoryBytes: --max-history reads bytes with or without a unit,
// in any case, and refuses what is not a size, saying what it wants.
func TestMaxHistoryBytes(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
	}{
		{"0", 0}, {"100000", 100000}, {"256KiB", 256 << 10}, {"256kib", 256 << 10}, {"2MB", 2000000},
		{"1MiB", 1 << 20}, {"64 KB", 64000}, {"512B", 512}, {defaultMaxHistory, 256 << 10},
	} {
		if got, err := maxHistoryBytes(tt.in); err != nil || got != tt.want {
			t.Errorf("%q: %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "lots", "-1", "1.5MB", "KiB", "99999999999999MiB", "12GB"} {
		if got, err := maxHistoryBytes(in); err == nil || !strings.Contains(err.Error(), "--max-history") {
			t.Errorf("%q: %d, %v; want an error naming --max-history", in, got, err)
		}
	}
}
