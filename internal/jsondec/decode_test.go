package jsondec

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type inner struct {
	A int               `json:"a"`
	B []string          `json:"b,omitempty"`
	M map[string]*inner `json:"m"`
}

type sample struct {
	Name    string             `json:"name"`
	Count   int8               `json:"count"`
	Big     uint64             `json:"big"`
	Ratio   float32            `json:"ratio"`
	On      bool               `json:"on"`
	Ptr     *string            `json:"ptr"`
	Tags    []string           `json:"tags"`
	Nested  inner              `json:"nested"`
	PNested *inner             `json:"pnested"`
	Map     map[string]int     `json:"map"`
	Any     any                `json:"any"`
	Raw     json.RawMessage    `json:"raw"`
	Bytes   []byte             `json:"bytes"`
	When    time.Time          `json:"when"`
	Quoted  int                `json:"quoted,string"`
	Untag   string             // matched by field name, case-insensitively
	Skip    string             `json:"-"`
	hidden  string             //nolint:unused // unexported: never decoded
	Arr     [2]int             `json:"arr"`
	IntKeys map[int]string     `json:"int_keys"`
	Deep    [][]map[string]int `json:"deep"`
}

type embedded struct {
	inner
	X int `json:"x"`
}

type recursive struct {
	V    int        `json:"v"`
	Next *recursive `json:"next"`
}

var inputs = []string{
	`{"name":"a\u00e9\n\"","count":-128,"big":18446744073709551615,"ratio":1.5,"on":true,"ptr":"p","tags":["x","y"],
	  "nested":{"a":1,"b":["z"],"m":{"k":{"a":2}}},"pnested":{"a":3},"map":{"one":1},"any":{"x":[1,"2",null]},
	  "raw":[1, 2],"bytes":"aGk=","when":"2026-01-02T03:04:05Z","quoted":"42","untag":"u","UNTAG":"v","skip":"no","hidden":"no",
	  "arr":[1,2,3],"int_keys":{"1":"one"},"deep":[[{"a":1}],[]]}`,
	`{"name":null,"tags":null,"ptr":null,"map":null,"nested":null,"pnested":null}`,
	`{"tags":[],"map":{}}`,
	`{"count":128}`,
	`{"count":1.5}`,
	`{"big":-1}`,
	`{"ratio":1e39}`,
	`{"name":5}`,
	`{"on":"true"}`,
	`{"tags":"x"}`,
	`{"name":"\ud800 lone"}`,
	"{\"name\":\"bad \xff utf8\"}",
	`{"name":"x"} trailing`,
	`{"name":"x",}`,
	`{"unknown":{"deep":[1,{"a":null}]},"name":"ok"}`,
	`[]`, `null`, `"str"`, ``, `{`,
	` { "name" : "spaces" } `,
}

// TestSameAsEncodingJSON decodes every input into fresh values with both
// decoders and wants the same values and the same errors.
func TestSameAsEncodingJSON(t *testing.T) {
	for _, in := range inputs {
		compare[sample](t, in)
		compare[embedded](t, in)
		compare[recursive](t, `{"v":1,"next":{"v":2,"next":{"v":3}}}`)
		compare[map[string]any](t, in)
		compare[[]int](t, in)
	}
}

func compare[T any](t *testing.T, in string) {
	t.Helper()
	var want, got T
	werr := json.Unmarshal([]byte(in), &want)
	gerr := Decode([]byte(in), &got)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Errorf("%T %q: error %v, encoding/json says %v", got, in, gerr, werr)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(sample{}, embedded{}, inner{})); diff != "" {
		t.Errorf("%T %q (-encoding/json +jsondec)\n%s", got, in, diff)
	}
}

func FuzzSameAsEncodingJSON(f *testing.F) {
	for _, in := range inputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		compare[sample](t, string(in))
		compare[recursive](t, string(in))
	})
}

type echoIn struct {
	Message string `json:"message"`
}

func BenchmarkUnmarshal(b *testing.B) {
	in := []byte(`{"message":"hello, world"}`)
	b.Run("jsondec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v echoIn
			if err := Decode(in, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v echoIn
			if err := json.Unmarshal(in, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestConcurrentFirstUse decodes a recursive type from many goroutines at
// once, before any plan exists: run with -race.
func TestConcurrentFirstUse(t *testing.T) {
	type node struct {
		V    int              `json:"v"`
		Kids []*node          `json:"kids"`
		Meta map[string]*node `json:"meta"`
	}
	in := []byte(`{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}],"meta":{"x":{"v":4}}}`)
	done := make(chan error, 16)
	for range 16 {
		go func() {
			var n node
			err := Decode(in, &n)
			if err == nil && (n.V != 1 || n.Kids[0].Kids[0].V != 3 || n.Meta["x"].V != 4) {
				err = errors.New("wrong value")
			}
			done <- err
		}()
	}
	for range 16 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
