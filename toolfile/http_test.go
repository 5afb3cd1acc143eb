package toolfile_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/toolfile"
)

const httpToolFile = `
name: get_user
description: Fetch a user by id
category: http
parameters:
  - name: id
    type: string
    description: The user's id
    validation:
      pattern: "^[a-z0-9]+$"
entry:
  type: http
  method: GET
  url: "%s/users/{id}"
  headers:
    X-Client: wield
  auth:
    type: bearer
    env: WIELD_TEST_TOKEN
  timeout: 5s
`

// TestHTTPEntry loads a tool file with an http entry and calls it end to
// end against a local server the guard allows explicitly.
func TestHTTPEntry(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" || r.Header.Get("X-Client") != "wield" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"` + strings.TrimPrefix(r.URL.Path, "/users/") + `","name":"Ann"}`))
	}))
	defer srv.Close()
	t.Setenv("WIELD_TEST_TOKEN", "s3cret")

	call := func(guard *httptool.Guard) *wield.Result {
		t.Helper()
		l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"http": toolfile.HTTPKind(guard)}}
		set, err := l.Load(context.Background(), "get_user.yaml", []byte(strings.Replace(httpToolFile, "%s", srv.URL, 1)))
		if err != nil {
			t.Fatal(err)
		}
		reg := wield.NewRegistry(nil)
		if err := set.Apply(reg); err != nil {
			t.Fatal(err)
		}
		e := engine.New(reg, nil)
		defer e.Close(context.Background())
		res, err := e.Call(context.Background(), wield.Call{Tool: "get_user", Arguments: json.RawMessage(`{"id":"ann1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	res := call(&httptool.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	var out struct {
		StatusCode int               `json:"status_code"`
		Body       map[string]string `json:"body"`
	}
	if !res.OK || json.Unmarshal(res.Output, &out) != nil || out.StatusCode != 200 || out.Body["id"] != "ann1" {
		t.Fatalf("allowed: %s %s %s", res.Output, res.ErrorType, res.Error)
	}
	// Without the explicit allowance the guard refuses loopback.
	if res := call(nil); res.ErrorType != wield.ErrPermissionDenied || !strings.Contains(res.Error, "Access denied") {
		t.Errorf("default guard: %s %q", res.ErrorType, res.Error)
	}
}

// TestHTTPEntrySecretNames: an http entry's output replaces the response
// headers the configuration names as secrets, as well as the default ones.
func TestHTTPEntrySecretNames(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Session-Pin", "p1n-value")
		w.Header().Set("Set-Cookie", "sid=abc")
		w.Header().Set("X-Plain", "visible")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	guard := &httptool.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"http": toolfile.HTTPKind(guard, "pin")}}
	set, err := l.Load(context.Background(), "h.yaml", []byte("name: h\ndescription: d\nentry: {type: http, url: \""+srv.URL+"/x\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	res, err := eng.Call(context.Background(), wield.Call{Tool: "h"})
	if err != nil || !res.OK {
		t.Fatalf("%+v %v", res, err)
	}
	out := string(res.Output)
	if strings.Contains(out, "p1n-value") || strings.Contains(out, "sid=abc") || !strings.Contains(out, "visible") {
		t.Errorf("output = %s", out)
	}
}
