package wield

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// benchResults are the results BenchmarkResultJSON encodes: what an echo
// answers, a 10 KB text (a file read, a page fetched), and a nested object
// with metadata.
func benchResults() []struct {
	name string
	r    *Result
} {
	at := time.Date(2026, 11, 21, 17, 4, 5, 123456789, time.UTC)
	base := Result{CallID: "019a9f3c7b2e7d0c9a1b2c3d4e", Tool: "echo", OK: true, Attempts: 1,
		StartedAt: at, FinishedAt: at.Add(1500 * time.Microsecond), Duration: 1500 * time.Microsecond}
	echo := base
	echo.Output = json.RawMessage(`{"message":"if a < b && c > d"}`)
	text := base
	text.Tool = "read_file"
	line := "func less(a, b int) bool { return a < b && b > 0 } // \"quoted\" & more\n"
	s, _ := json.Marshal(strings.Repeat(line, 10<<10/len(line)))
	text.Output = json.RawMessage(unescaped(s))
	nested := base
	nested.Tool = "http_get"
	nested.Output = json.RawMessage(`{"status":200,"headers":{"content-type":"application/json","x-id":"a<b"},` +
		`"body":{"items":[{"id":1,"name":"first","tags":["x","y"],"score":0.5},{"id":2,"name":"second & last","tags":[],"score":1e-7}],` +
		`"next":null,"total":2}}`)
	nested.Metadata = map[string]any{"truncated": false, "original_bytes": 1234.0, "replayed": true}
	nested.QueueWait = 250 * time.Microsecond
	return []struct {
		name string
		r    *Result
	}{{"echo", &echo}, {"text10k", &text}, {"nested", &nested}}
}

// unescaped is jsonenc.Unescape for the benchmark's inputs.
func unescaped(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<")), []byte(`\u003e`), []byte(">")), []byte(`\u0026`), []byte("&"))
}

// resultV2 is Result as github.com/go-json-experiment/json (encoding/json/v2)
// writes it with the same keys.
type resultV2 struct {
	*resultJSON
	DurationMS  float64 `json:"duration_ms"`
	QueueWaitMS float64 `json:"queue_wait_ms,omitzero"`
}

var v2Opts = jsonv2.JoinOptions(jsonv2.Deterministic(true), jsontext.EscapeForJS(true))

// BenchmarkResultJSON compares Result.MarshalJSON (jsonenc) with the
// libraries that could replace it: encoding/json/v2 (as
// github.com/go-json-experiment/json, HTML unescaped by default) and
// encoding/json with SetEscapeHTML(false). Run the three in one go
// (-count=5 -benchtime=200ms) and compare medians: the ratio, not the
// figures, carries from one busy machine to another.
func BenchmarkResultJSON(b *testing.B) {
	for _, c := range benchResults() {
		r := c.r
		b.Run(c.name+"/jsonenc", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.MarshalJSON(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/jsonv2", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jsonv2.Marshal(resultV2{(*resultJSON)(r), ms(r.Duration), ms(r.QueueWait)}, v2Opts); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(resultV2{(*resultJSON)(r), ms(r.Duration), ms(r.QueueWait)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestResultBenchAgrees checks that BenchmarkResultJSON compares like with
// like: the three encoders write the same JSON value.
func TestResultBenchAgrees(t *testing.T) {
	for _, c := range benchResults() {
		r := c.r
		a, err1 := r.MarshalJSON()
		b, err2 := jsonv2.Marshal(resultV2{(*resultJSON)(r), ms(r.Duration), ms(r.QueueWait)}, v2Opts)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		err3 := enc.Encode(resultV2{(*resultJSON)(r), ms(r.Duration), ms(r.QueueWait)})
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %v %v %v", c.name, err1, err2, err3)
		}
		var va, vb, vc any
		json.Unmarshal(a, &va)
		json.Unmarshal(b, &vb)
		json.Unmarshal(buf.Bytes(), &vc)
		if !reflect.DeepEqual(va, vb) || !reflect.DeepEqual(va, vc) {
			t.Errorf("%s:\njsonenc %s\njson/v2 %s\nencoding/json %s", c.name, a, b, buf.Bytes())
		}
	}
}
