package schema

import "testing"

func BenchmarkNormalizeEcho(b *testing.B) {
	v := mustCompile(b, `{"type":"object","properties":{"message":{"type":"string","description":"The text to send back"}},"required":["message"],"additionalProperties":false}`)
	in := []byte(`{"message":"hello, world"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := v.Normalize(in); errs != nil {
			b.Fatal(errs)
		}
	}
}
