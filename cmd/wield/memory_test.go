package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMemoryReturn feeds memoryReturn a sample a tick and lists the ticks
// at which the memory goes back (each return's sample read again after
// it, as returnMemory does).
func TestMemoryReturn(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name    string
		samples []memorySample // the first is where it starts from
		want    []int          // the ticks (indexes of samples) that return
	}{
		{
			name:    "idle: nothing allocated, no collection",
			samples: []memorySample{{}, {}, {}, {}},
		},
		{
			name: "a burst of calls, then quiet: once",
			samples: []memorySample{
				{cycles: 2, allocs: 10 * mb},
				{cycles: 10, allocs: 40 * mb},
				{cycles: 18, allocs: 70 * mb},
				{cycles: 18, allocs: 70*mb + 1000},
				{cycles: 19, allocs: 70*mb + 2000}, // the return's own collection
				{cycles: 19, allocs: 70*mb + 3000},
			},
			want: []int{3},
		},
		{
			name: "busy without a pause: never",
			samples: []memorySample{
				{cycles: 2},
				{cycles: 20, allocs: 30 * mb},
				{cycles: 40, allocs: 60 * mb},
				{cycles: 60, allocs: 90 * mb},
			},
		},
		{
			name: "quiet after fewer collections than a burst: never",
			samples: []memorySample{
				{cycles: 2},
				{cycles: 10, allocs: 30 * mb},
				{cycles: 17, allocs: 60 * mb},
				{cycles: 17, allocs: 60 * mb},
			},
		},
		{
			name: "a light load: collections add up, returned once in sixteen",
			samples: []memorySample{
				{cycles: 0},
				{cycles: 8, allocs: 1 * mb / 2},
				{cycles: 15, allocs: 2 * mb / 2},
				{cycles: 16, allocs: 3 * mb / 2},
				{cycles: 17, allocs: 4 * mb / 2},
				{cycles: 30, allocs: 5 * mb / 2},
				{cycles: 33, allocs: 6 * mb / 2},
			},
			want: []int{3, 6},
		},
		{
			name: "a thousand sessions closed, no longer falling",
			samples: []memorySample{
				{sessions: 0},
				{sessions: 1500, allocs: 30 * mb},
				{sessions: 400, allocs: 60 * mb},
				{sessions: 200, allocs: 90 * mb},
				{sessions: 200, allocs: 120 * mb},
				{sessions: 200, allocs: 150 * mb},
			},
			want: []int{4},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m memoryReturn
			var got []int
			for i, s := range tt.samples {
				if m.due(s) {
					got = append(got, i)
					m.returned(s)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("returned at ticks (-want +got):\n%s", diff)
			}
		})
	}
}
