package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// TestHiddenToolAnswersAsUnknown: to a key the policies hide calculator
// from, every route that takes a tool name answers for calculator what it
// answers for a tool that does not exist (describe, call with good or bad
// arguments, dry run, batch), the policy is never named, its own records
// of those calls read alike, and another key's calls of calculator are
// not among the records it lists or reads.
func TestHiddenToolAnswersAsUnknown(t *testing.T) {
	set := policySet(t, `@id("everyone") permit(principal, action, resource);
@id("two-no-calc") forbid(principal == Key::"config-2", action, resource == Tool::"calculator");`)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo(), builtin.Calculator())
	hs := policyServer(t, reg, set)

	code, b := do(t, hs, "POST", "/v1/tools/calculator/call", "secret-one", `{"arguments":{"expression":"1+1"}}`)
	var ones wield.Result
	if code != 200 || json.Unmarshal(b, &ones) != nil || !ones.OK {
		t.Fatalf("key one calls calculator: %d %s", code, b)
	}

	// What the two answers share once the tool's name, IDs and times are
	// taken out.
	varying := regexp.MustCompile(`"(call_id|id|started_at|finished_at|queued_at|duration_ms)":("[^"]*"|[0-9.e-]+)`)
	same := func(tool string, b []byte) string {
		return varying.ReplaceAllString(strings.ReplaceAll(string(b), tool, "TOOL"), `"$1":_`)
	}
	var ids []string // of key two's calls of calculator
	for _, tt := range []struct{ method, path, body string }{
		{"GET", "/v1/tools/TOOL", ""},
		{"POST", "/v1/tools/TOOL/call", `{"arguments":{"expression":"1+1"}}`},
		{"POST", "/v1/tools/TOOL/call", `{"arguments":{"nope":1}}`},
		{"POST", "/v1/tools/TOOL/call", `{"arguments":[1]}`},
		{"POST", "/v1/tools/TOOL/call?dry_run=true", `{"arguments":{"expression":"1+1"}}`},
		{"POST", "/v1/tools/TOOL/call?dry_run=true", `{"arguments":{}}`},
		{"POST", "/v1/batch", `{"calls":[{"tool":"TOOL","arguments":{"expression":"1+1"}}]}`},
	} {
		var got [2]string
		for i, tool := range []string{"no_such_tool", "calculator"} {
			code, b := do(t, hs, tt.method, strings.ReplaceAll(tt.path, "TOOL", tool), "secret-two", strings.ReplaceAll(tt.body, "TOOL", tool))
			if strings.Contains(string(b), "two-no-calc") {
				t.Errorf("%s %s: the policy is named: %s", tt.method, tt.path, b)
			}
			got[i] = fmt.Sprint(code, " ", same(tool, b))
			if tool == "calculator" && tt.method == "POST" && !strings.Contains(tt.path, "dry_run") {
				for _, m := range regexp.MustCompile(`"call_id":"([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
					ids = append(ids, m[1])
				}
			}
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("%s %s %s as key two: unknown tool's answer (-) and calculator's (+) differ:\n%s", tt.method, tt.path, tt.body, diff)
		}
	}

	// Key two's own calls of calculator read as calls of a tool that does
	// not exist; key one's is not shown to it.
	for _, id := range ids {
		code, b := do(t, hs, "GET", "/v1/calls/"+id, "secret-two", "")
		if code != 200 || !strings.Contains(string(b), `"error_type":"tool_not_found"`) || strings.Contains(string(b), "tool_version") || strings.Contains(string(b), `"category"`) {
			t.Errorf("key two reads its call %s: %d %s; want its record, tool_not_found, nothing of the tool", id, code, b)
		}
	}
	code, missing := do(t, hs, "GET", "/v1/calls/no-such-call", "secret-two", "")
	code2, b := do(t, hs, "GET", "/v1/calls/"+ones.CallID, "secret-two", "")
	if code != 404 || code2 != code || string(b) != string(missing) {
		t.Errorf("key two reads key one's calculator call: %d %s; want what a missing call answers, %d %s", code2, b, code, missing)
	}
	code, b = do(t, hs, "GET", "/v1/calls", "secret-two", "")
	if code != 200 || strings.Contains(string(b), ones.CallID) || strings.Contains(string(b), `"ok":true`) {
		t.Errorf("key two lists the calls: %d %s; want no record of key one's calculator call", code, b)
	}
	if code, b = do(t, hs, "GET", "/v1/calls/"+ones.CallID, "secret-one", ""); code != 200 {
		t.Errorf("key one reads its own call: %d %s", code, b)
	}
}

// policyServer serves reg through an engine deciding by set, on a store of
// its own, to two config keys: secret-one (config-1) and secret-two
// (config-2).
func policyServer(t *testing.T, reg *wield.Registry, set wield.Policy) *httptest.Server {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	eng := engine.New(reg, &engine.Options{Policy: set, Store: store})
	t.Cleanup(func() { eng.Close(context.Background()) })
	keys, err := NewKeyring("", ConfigKey(0, "secret-one"), ConfigKey(1, "secret-two"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Engine: eng, Store: store, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs
}
