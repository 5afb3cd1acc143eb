package jsondec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// strictJSON is what DecodeStrict stands in for: a json.Decoder with
// DisallowUnknownFields, and nothing after the value.
func strictJSON[T any](in []byte, v *T) error {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the value")
	}
	return nil
}

func compareStrict[T any](t *testing.T, in string) {
	t.Helper()
	var want, got T
	werr := strictJSON([]byte(in), &want)
	if !DecodeStrict([]byte(in), &got) {
		return // encoding/json decides
	}
	if werr != nil {
		t.Errorf("%T %q: the fast path took what encoding/json refuses: %v", got, in, werr)
		return
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(sample{}, embedded{}, inner{})); diff != "" {
		t.Errorf("%T %q (-encoding/json +DecodeStrict):\n%s", got, in, diff)
	}
}

var strictInputs = []string{
	`{"message":"hi"}`,
	`{"message":"hi","extra":1}`,
	`{"MESSAGE":"case"}`,
	`{"name":"x","nested":{"a":1,"zzz":2}}`,
	`{"name":"x","pnested":{"a":1,"m":{"k":{"a":1,"q":0}}}}`,
	`{"skip":"tagged -"}`,
	`{"hidden":"unexported"}`,
	`{"when":"2026-01-02T03:04:05Z"}`,
	`{"any":{"free":"form"},"raw":{"also":"free"},"map":{"k":1}}`,
	`{"v":1,"next":{"v":2,"next":{"v":3,"w":4}}}`,
}

func TestDecodeStrict(t *testing.T) {
	for _, in := range append(strictInputs, inputs...) {
		compareStrict[sample](t, in)
		compareStrict[recursive](t, in)
		compareStrict[echoIn](t, in)
	}
	var e echoIn
	if !DecodeStrict([]byte(`{"message":"hi"}`), &e) || e.Message != "hi" {
		t.Errorf("plain input left to encoding/json: %+v", e)
	}
	if DecodeStrict([]byte(`{"message":"hi","x":1}`), &e) {
		t.Error("an unknown key decoded")
	}
}

func FuzzDecodeStrict(f *testing.F) {
	for _, in := range append(strictInputs, inputs...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		compareStrict[sample](t, string(in))
		compareStrict[recursive](t, string(in))
	})
}
