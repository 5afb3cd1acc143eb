package wield

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// referenceJSON is what MarshalJSON promises, written by encoding/json told
// not to escape HTML, with the escapes \u003c, \u003e and \u0026 a tool
// wrote in its output turned back.
func referenceJSON(r *Result) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(resultMS{(*resultJSON)(r), ms(r.Duration), ms(r.QueueWait)}); err != nil {
		return nil, err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return htmlEscapes.ReplaceAllFunc(b, func(m []byte) []byte {
		if e, ok := map[string]string{`\u003c`: "<", `\u003e`: ">", `\u0026`: "&"}[strings.ToLower(string(m))]; ok {
			return []byte(e)
		}
		return m // a pair of backslashes, matched first so that what follows is text
	}), nil
}

var htmlEscapes = regexp.MustCompile(`\\\\|\\u00(?:3[cCeE]|26)`)

// resultCases are results whose JSON the fast encoder must write exactly
// as encoding/json without HTML escapes does, or leave to it.
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
		{OK: true, Output: json.RawMessage(`{"code":"if a \u003c b \u0026\u0026 c \u003E d","esc":"\\u003c"}`)},
		{OK: true, Output: json.RawMessage(" {\"code\": \"a \\u003c b\"}\n")},
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
		want, wantErr := referenceJSON(r)
		got, err := r.MarshalJSON()
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("case %d:\n got %s (%v)\nwant %s (%v)", i, got, err, want, wantErr)
		}
		// AppendJSON: the same after what b held, or b as it was on error,
		// whether the fast path or encoding/json writes it.
		prefix := []byte("prefix:")
		app, err := r.AppendJSON(append(make([]byte, 0, 4), prefix...))
		if wantErr != nil {
			want = nil
		}
		if string(app) != string(prefix)+string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("case %d: AppendJSON:\n got %s (%v)\nwant %s%s (%v)", i, app, err, prefix, want, wantErr)
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
	f.Add("c", "t", true, []byte(`{"a":"x \u003c\u0026\u003e y"}`), "a<b && c>d", "p<", "m&", int64(1), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, id, tool string, ok bool, out []byte, msg, path, vmsg string, dur, wait, unix int64) {
		r := &Result{CallID: id, Tool: tool, OK: ok, Output: out, Error: msg, Duration: time.Duration(dur),
			QueueWait: time.Duration(wait), StartedAt: time.Unix(unix, dur%1e9).UTC(), FinishedAt: time.Unix(unix, 0)}
		if path != "" || vmsg != "" {
			r.ValidationErrors = []ValidationError{{Path: path, Message: vmsg}}
		}
		want, wantErr := referenceJSON(r)
		got, err := r.MarshalJSON()
		if string(got) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("\n got %s (%v)\nwant %s (%v)", got, err, want, wantErr)
		}
		if slow, err := r.marshalJSON(); string(slow) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("\nslow %s (%v)\nwant %s (%v)", slow, err, want, wantErr)
		}
	})
}

// TestMSFast holds ms to its definition, msText: every duration up to
// 3 ms, durations around each tie and each power of two up to 2^41 ns,
// a spread of others, and negative ones.
func TestMSFast(t *testing.T) {
	check := func(d time.Duration) {
		if got, want := ms(d), msText(d); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("ms(%d) = %v, msText says %v", int64(d), got, want)
		}
	}
	for d := time.Duration(-3000); d <= 3*time.Millisecond; d++ {
		check(d)
	}
	for p := 10; p <= 41; p++ {
		for _, base := range []time.Duration{1 << p, (1 << p) / 1000 * 1000} {
			for off := time.Duration(-1002); off <= 1002; off++ {
				check(base + off)
			}
		}
	}
	x := uint64(0x9e3779b97f4a7c15)
	for range 200000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		check(time.Duration(x % (1 << 42)))
		check(time.Duration(x%(1<<40))/1000*1000 + 500)
	}
}
