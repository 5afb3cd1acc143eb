package schema

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzNormalize feeds arbitrary arguments to a schema with every kind of
// member. Whatever comes in, Normalize must not panic; what it accepts must
// be valid JSON holding only declared keys, and normalising it again must
// give it back unchanged.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		`{"city":"Paris"}`,
		`{"city":"Rome","days":"5","hourly":"true","tags":"[\"a\"]","where":"{\"lat\":1,\"lon\":2}"}`,
		`{"city":"R\u00f6m\"e","days":5.0,"ratio":"0.5","note":null}`,
		`{"City":"x","zip":1}`,
		`"{\"city\":\"Oslo\"}"`,
		`[[[[[[]]]]]]`,
		`{"city":"A","tags":[1,2,2]}`,
		``, `null`, `{`, "{\"city\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	var v *Validator
	f.Fuzz(func(t *testing.T, in []byte) {
		if v == nil {
			v = mustCompile(t, weather)
		}
		out, errs := v.Normalize(in)
		if errs != nil {
			if out != nil {
				t.Fatalf("output %s with errors %v", out, errs)
			}
			for _, e := range errs {
				if e.Message == "" {
					t.Fatalf("empty message in %v", errs)
				}
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("accepted %q as %q, which is not a JSON object: %v", in, out, err)
		}
		for k := range m {
			if v.root.lookup([]byte(k)) < 0 {
				t.Fatalf("accepted undeclared key %q from %q", k, in)
			}
		}
		if _, ok := m["city"]; !ok {
			t.Fatalf("accepted %q without the required city", in)
		}
		again, errs := v.Normalize(out)
		if errs != nil || !bytes.Equal(again, out) {
			t.Fatalf("normalising %q again gave %q, %v", out, again, errs)
		}
	})
}

// FuzzParse checks the strict parser against encoding/json: everything it
// accepts, encoding/json accepts too.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2.5e-3,"x",true,false,null]`, `{"a":{"b":[{}]}}`, `"\ud83d\ude00"`, `-0`, `1e`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var d doc
		root, err := d.parse(in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("parser accepted %q, which encoding/json refuses", in)
		}
		if n := d.nodes[root]; n.kind == kString && !json.Valid(n.raw) {
			t.Fatalf("string token %q is not JSON", n.raw)
		}
	})
}
