package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

// TestRecordRedactsHeadersAndURLs: header maps in arguments (X-Api-Key,
// Cookie), keys in URL queries, user information in URLs, and the same in
// the output (response headers, the final URL) and in error texts never
// reach the record or the events, with the configuration's names added to
// the defaults; the handler gets the real values and the caller the real
// output.
func TestRecordRedactsHeadersAndURLs(t *testing.T) {
	type in struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
		Pin     string            `json:"pin,omitempty"`
		Fail    bool              `json:"fail,omitempty"`
	}
	type out struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	var got in
	tool := wield.Func("fetch", "x", func(_ context.Context, v in) (out, error) {
		got = v
		if v.Fail {
			return out{}, wield.Errorf(wield.ErrExecution, "GET %s failed", v.URL)
		}
		return out{URL: v.URL, Headers: map[string]string{"Set-Cookie": "sid=abc", "Content-Type": "text/plain"}, Body: "rows=3"}, nil
	})
	store := memstore.New(0)
	bus := wield.NewBus(64)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: quiet})
	reg.MustRegister(tool)
	e := engine.New(reg, &engine.Options{Store: store, Logger: quiet, SecretNames: []string{"pin"}})
	t.Cleanup(func() { e.Close(context.Background()) })
	sub := bus.Subscribe(nil)
	defer sub.Close()

	args := `{"url":"https://ann:hunter2@api.example.com/v1?api_key=s3cret&page=2","headers":{"X-Api-Key":"s3cret","Cookie":"sid=abc","Accept":"text/plain"},"pin":"p1n"}`
	res, err := e.Call(context.Background(), wield.Call{Tool: "fetch", Arguments: json.RawMessage(args)})
	if err != nil || !res.OK {
		t.Fatal(err, res.Error)
	}
	if got.Headers["X-Api-Key"] != "s3cret" || got.Headers["Cookie"] != "sid=abc" || got.Pin != "p1n" || !strings.Contains(got.URL, "ann:hunter2@") || !strings.Contains(got.URL, "api_key=s3cret") {
		t.Errorf("the handler did not get the real values: %+v", got)
	}
	if !strings.Contains(string(res.Output), "sid=abc") || !strings.Contains(string(res.Output), "api_key=s3cret") {
		t.Errorf("the caller did not get the real output: %s", res.Output)
	}
	failed, err := e.Call(context.Background(), wield.Call{Tool: "fetch", Arguments: json.RawMessage(`{"url":"https://h/x?access_token=s3cret","fail":true}`)})
	if err != nil || failed.OK {
		t.Fatal(err, failed)
	}

	recs := store.Records(memstore.Filter{})
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	rec := recs[0]
	if rec.Call.ID != res.CallID {
		rec = recs[1]
	}
	wantArgs := map[string]any{
		"url":     "https://[REDACTED]@api.example.com/v1?api_key=[REDACTED]&page=2",
		"headers": map[string]any{"X-Api-Key": "[REDACTED]", "Cookie": "[REDACTED]", "Accept": "text/plain"},
		"pin":     "[REDACTED]",
	}
	for _, raw := range []json.RawMessage{rec.Call.Arguments, rec.Arguments} {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantArgs, m); diff != "" {
			t.Errorf("recorded arguments (-want +got)\n%s", diff)
		}
	}
	var o map[string]any
	if err := json.Unmarshal(rec.Result.Output, &o); err != nil {
		t.Fatal(err)
	}
	wantOut := map[string]any{
		"url":     "https://[REDACTED]@api.example.com/v1?api_key=[REDACTED]&page=2",
		"headers": map[string]any{"Set-Cookie": "[REDACTED]", "Content-Type": "text/plain"},
		"body":    "rows=3",
	}
	if diff := cmp.Diff(wantOut, o); diff != "" {
		t.Errorf("recorded output (-want +got)\n%s", diff)
	}
	var all strings.Builder
	for _, r := range recs {
		b, _ := json.Marshal(r)
		all.Write(b)
	}
	for _, ev := range ready(sub) {
		b, _ := json.Marshal(ev)
		all.Write(b)
	}
	if !strings.Contains(all.String(), "GET https://h/x?access_token=[REDACTED] failed") {
		t.Errorf("the failure's text is not in the record or the events as redacted:\n%s", all.String())
	}
	for _, secret := range []string{"s3cret", "sid=abc", "hunter2", "p1n"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("records or events hold %q:\n%s", secret, all.String())
		}
	}
}

// TestRecordRedactsRefusedValues: a value refused by validation is quoted in
// the problem's message for the model, and the record and the events keep
// neither the secret members inside it nor the value of a secret-named
// parameter; the caller's result keeps the real message.
func TestRecordRedactsRefusedValues(t *testing.T) {
	type in struct {
		Message  string `json:"message"`
		Password int    `json:"password,omitempty"`
		Data     any    `json:"data,omitempty"`
	}
	tool := wield.Func("say", "x", func(_ context.Context, v in) (string, error) { return v.Message, nil })
	store := memstore.New(0)
	bus := wield.NewBus(64)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: quiet})
	reg.MustRegister(tool)
	e := engine.New(reg, &engine.Options{Store: store, Logger: quiet})
	t.Cleanup(func() { e.Close(context.Background()) })
	sub := bus.Subscribe(nil)
	defer sub.Close()

	calls := []string{
		`{"message":{"user":"ann","password":"hunter2"}}`,
		`{"message":"hi","password":"not-a-number-hunter2"}`,
		`{"message":"hi","data":{"nested":{"api_key":"hunter2"}}}`,
	}
	for _, args := range calls {
		res, err := e.Call(context.Background(), wield.Call{Tool: "say", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK && !strings.Contains(res.Error, "hunter2") {
			t.Errorf("the caller's error lost the value it refused: %s", res.Error)
		}
	}
	recs := store.Records(memstore.Filter{})
	if len(recs) != len(calls) {
		t.Fatalf("%d records, want %d", len(recs), len(calls))
	}
	for _, rec := range recs {
		b, _ := json.Marshal(rec)
		if strings.Contains(string(b), "hunter2") {
			t.Errorf("record keeps the secret: %s", b)
		}
	}
	for _, ev := range ready(sub) {
		b, _ := json.Marshal(ev)
		if strings.Contains(string(b), "hunter2") {
			t.Errorf("event keeps the secret: %s", b)
		}
	}
	var msgs []string
	for _, rec := range recs {
		if rec.Result != nil && !rec.Result.OK {
			for _, v := range rec.Result.ValidationErrors {
				msgs = append(msgs, v.String())
			}
		}
	}
	want := []string{
		`message: expected string, got object {"user":"ann","password":"[REDACTED]"}`,
		`password: expected integer, got [REDACTED]`,
	}
	if diff := cmp.Diff(want, msgs, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("recorded problems (-want +got):\n%s", diff)
	}
}
