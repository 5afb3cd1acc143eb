package wield

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// resultCases are results whose JSON the fast encoder must write exactly
// as encoding/json does, or leave to it.
func resultCases() []*Result {
	at := time.Date(2026, 11, 21, 17, 4, 5, 123456789, time.FixedZone("x", 5*3600+1800))
	return []*Result{
		{},
		{CallID: "c1", Tool: "echo", OK: true, Output: json.RawMessage(`{"message":"hello, world"}`), Attempts: 1,
			StartedAt: at, FinishedAt: at.Add(1500 * time.Microsecond), Duration: 1500 * time.Microsecond},
		{CallID: "c<2>&", Tool: "t\u2028\"\\\n", Output: json.RawMessage(`"<b>"`), Error: "bad <input> & \x01 \xff",
			ErrorType: ErrValidation, ValidationErrors: []ValidationError{{Path: "a.b", Message: "want <int>"}, {Message: "é"}},
			Attempts: 3, StartedAt: at.UTC(), Duration: 7 * time.Nanosecond, QueueWait: 2 * time.Hour},
		{Output: json.RawMessage(" { \"a\" : [1, 2] }\n"), Duration: time.Duration(math.MaxInt64)},
		{Output: json.RawMessage(`{"s":"a\"<\u2028"}`)},
		{Output: json.RawMessage("\"\u2028\"")},
		{Output: json.RawMessage(`{"a":`)},
		{Output: json.RawMessage(`"unterminated`)},
		{Metadata: map[string]any{"replayed": true, "of": "c1", "n": 1.5, "html": "<x>"}},
		{StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{StartedAt: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Metadata: map[string]any{"bad": math.NaN()}},
		{Duration: time.Nanosecond, QueueWait: -time.Millisecond},
	}
}

func TestResultAppendJSON(t *testing.T) {
	for i, r := range resultCases() {
		want, wantErr := r.marshalJSON()
		got, err := r.MarshalJSON()
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("case %d:\n got %s (%v)\nwant %s (%v)", i, got, err, want, wantErr)
		}
	}
	// The common shape takes the fast path.
	if _, ok := resultCases()[1].appendJSON(nil); !ok {
		t.Error("a plain result left to encoding/json")
	}
}

func FuzzResultJSON(f *testing.F) {
	f.Add("c1", "echo", true, []byte(`{"message":"hi"}`), "", "p", "m", int64(1500000), int64(0), int64(1763744645))
	f.Add("<", "\u2029", false, []byte(" [1,\n2] "), "e\xff", "", "", int64(7), int64(-3), int64(-62135596800))
	f.Fuzz(func(t *testing.T, id, tool string, ok bool, out []byte, msg, path, vmsg string, dur, wait, unix int64) {
		r := &Result{CallID: id, Tool: tool, OK: ok, Output: out, Error: msg, Duration: time.Duration(dur),
			QueueWait: time.Duration(wait), StartedAt: time.Unix(unix, dur%1e9).UTC(), FinishedAt: time.Unix(unix, 0)}
		if path != "" || vmsg != "" {
			r.ValidationErrors = []ValidationError{{Path: path, Message: vmsg}}
		}
		want, wantErr := r.marshalJSON()
		got, err := r.MarshalJSON()
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("\n got %s (%v)\nwant %s (%v)", got, err, want, wantErr)
		}
	})
}
