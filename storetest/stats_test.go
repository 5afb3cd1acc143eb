package storetest

import (
	"testing"
	"time"
)

// TestNearestRank pins the suite's reference down: the value at rank
// ceil(p·n) of the sorted values.
func TestNearestRank(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	oneToTwenty := ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
	tests := []struct {
		d        []time.Duration
		pct      int
		want     time.Duration
		describe string
	}{
		{nil, 50, 0, "no values"},
		{ms(7), 50, 7 * time.Millisecond, "one value"},
		{ms(7), 95, 7 * time.Millisecond, "one value"},
		{ms(3, 1, 2), 50, 2 * time.Millisecond, "rank ceil(1.5) = 2"},
		{ms(3, 1, 2), 95, 3 * time.Millisecond, "rank ceil(2.85) = 3"},
		{ms(4, 1, 3, 2), 50, 2 * time.Millisecond, "rank ceil(2) = 2, not an interpolation"},
		{oneToTwenty, 50, 10 * time.Millisecond, "rank 10"},
		{oneToTwenty, 95, 19 * time.Millisecond, "rank 19 exactly, where float rounding could give 20"},
		{oneToTwenty, 100, 20 * time.Millisecond, "the maximum"},
	}
	for _, tt := range tests {
		if got := NearestRank(tt.d, tt.pct); got != tt.want {
			t.Errorf("NearestRank(%v, %d) = %v, want %v (%s)", tt.d, tt.pct, got, tt.want, tt.describe)
		}
	}
	if oneToTwenty[0] != 20*time.Millisecond {
		t.Error("NearestRank sorted its argument in place")
	}
}
