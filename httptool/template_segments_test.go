package httptool

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// TestPathValueStaysInItsSegment: a path parameter fills its segment and
// nothing more. A value of "." or ".." made a dot segment, which servers
// resolve (Go's ServeMux redirects /v1/users/../admin to /v1/admin): the
// model reached, with the tool's credentials, any path of the host the tool
// file meant to confine it to /v1/users/{id}.
func TestPathValueStaysInItsSegment(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.EscapedPath())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	input := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"id": {Type: "string"}, "part": {Type: "string"}, "q": {Type: "string"},
	}}
	tests := []struct {
		name, url, args string
		refused         string // the parameter named in the refusal; "" for a request sent
		path            string // the path the server saw, when sent
	}{
		{"dot dot", "/v1/users/{id}/profile", `{"id": ".."}`, "id", ""},
		{"dot", "/v1/users/{id}", `{"id": "."}`, "id", ""},
		{"dot dot at the end", "/v1/users/{id}", `{"id": ".."}`, "id", ""},
		{"two placeholders make a dot dot", "/v1/{id}{part}/x", `{"id": ".", "part": "."}`, "id", ""},
		{"dot dot with a slash is escaped", "/v1/users/{id}", `{"id": "../admin"}`, "", "/v1/users/..%2Fadmin"},
		{"dots inside a segment", "/v1/files/{id}.txt", `{"id": "."}`, "", "/v1/files/..txt"},
		{"dots beside text", "/v1/users/{id}", `{"id": "..a"}`, "", "/v1/users/..a"},
		{"encoded dots stay encoded", "/v1/users/{id}", `{"id": "%2e%2e"}`, "", "/v1/users/%252e%252e"},
		{"dot dot in the query is a value", "/v1/users?q={q}", `{"q": ".."}`, "", "/v1/users"},
		{"the template's own dot segment", "/v1/../v1/users/{id}", `{"id": "7"}`, "", "/v1/../v1/users/7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			tool, err := New("t", "test tool", input, Spec{URL: srv.URL + tt.url}, localOnly())
			if err != nil {
				t.Fatal(err)
			}
			_, err = tool.Handler.Handle(context.Background(), json.RawMessage(tt.args))
			mu.Lock()
			defer mu.Unlock()
			if tt.refused == "" {
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				if len(seen) != 1 || seen[0] != tt.path {
					t.Fatalf("server saw %q, want [%q]", seen, tt.path)
				}
				return
			}
			var we *wield.Error
			if !errors.As(err, &we) || we.Type != wield.ErrValidation {
				t.Fatalf("error %v (server saw %q), want a validation_error", err, seen)
			}
			if !strings.Contains(we.Message, `"`+tt.refused+`"`) {
				t.Errorf("message %q does not name the parameter %q", we.Message, tt.refused)
			}
			if len(seen) != 0 {
				t.Errorf("server saw %q, want nothing sent", seen)
			}
		})
	}
}

// TestHeaderValueOneLine: a parameter in a header template that holds CR,
// LF or another control character is the model's mistake, a
// validation_error naming the header and the parameter, sent nowhere. It
// was a transient execution_error from net/http's round trip, so an
// idempotent tool was retried with the same bad value.
func TestHeaderValueOneLine(t *testing.T) {
	sent := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent++ }))
	defer srv.Close()
	tool, err := New("t", "t", testInput, Spec{URL: srv.URL + "/h", Headers: map[string]string{"X-Lang": "{lang}"}}, localOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{`fr\r\nX-Evil: 1`, `fr\u0000`, `a\nb`, `x\u007f`} {
		_, err := tool.Handler.Handle(context.Background(), json.RawMessage(`{"lang":"`+v+`"}`))
		var we *wield.Error
		if !errors.As(err, &we) || we.Type != wield.ErrValidation || wield.IsTransient(err) {
			t.Fatalf("%s: error %v, want a validation_error that is not transient", v, err)
		}
		if !strings.Contains(we.Message, "X-Lang") || !strings.Contains(we.Message, "lang") {
			t.Errorf("%s: message %q names neither the header nor the parameter", v, we.Message)
		}
	}
	if _, err := tool.Handler.Handle(context.Background(), json.RawMessage(`{"lang":"fr\tCA"}`)); err != nil {
		t.Errorf("a tab is allowed in a header value: %v", err)
	}
	if sent != 1 {
		t.Errorf("server got %d requests, want 1 (the tab)", sent)
	}
}

// TestRedirectDropsCredentials: the credentials a tool file attaches (its
// auth header, headers that read the environment or are named as secrets)
// go to the origin its URL names, not to another that origin redirects to.
// net/http kept every header but Authorization and Cookie across hosts
// (and kept those too to another port or from https to http): an API that
// redirected (or had an open redirect the model could reach through a
// parameter) sent the tool's key to any host.
func TestRedirectDropsCredentials(t *testing.T) {
	var (
		mu   sync.Mutex
		got  http.Header
		path string
	)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got, path = r.Header.Clone(), r.URL.Path
		mu.Unlock()
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/landed", http.StatusFound)
		default:
			mu.Lock()
			got, path = r.Header.Clone(), r.URL.Path
			mu.Unlock()
		}
	}))
	defer origin.Close()
	t.Setenv("WIELD_TEST_KEY", "k3y")
	t.Setenv("WIELD_TEST_SIG", "s1g")
	creds := []string{"X-Api-Token", "X-Signed", "X-Session-Token"}
	specFor := func(p string, auth *Auth) Spec {
		return Spec{URL: origin.URL + p, Auth: auth, Headers: map[string]string{
			"X-Lang": "{lang}", "X-Signed": "${WIELD_TEST_SIG}", "X-Session-Token": "{id}"}}
	}
	for _, tt := range []struct {
		name, path string
		auth       *Auth
		authHeader string
		landed     string
		kept       bool
	}{
		{"api key to another origin", "/away", &Auth{Type: "api_key", Name: "X-Api-Token", Env: "WIELD_TEST_KEY"}, "X-Api-Token", "/landed", false},
		{"bearer to another origin", "/away", &Auth{Type: "bearer", Env: "WIELD_TEST_KEY"}, "Authorization", "/landed", false},
		{"basic to another origin", "/away", &Auth{Type: "basic", Env: "WIELD_TEST_KEY:WIELD_TEST_SIG"}, "Authorization", "/landed", false},
		{"api key within the origin", "/here", &Auth{Type: "api_key", Name: "X-Api-Token", Env: "WIELD_TEST_KEY"}, "X-Api-Token", "/landed", true},
		{"bearer within the origin", "/here", &Auth{Type: "bearer", Env: "WIELD_TEST_KEY"}, "Authorization", "/landed", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := New("t", "t", testInput, specFor(tt.path, tt.auth), localOnly())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tool.Handler.Handle(context.Background(), json.RawMessage(`{"lang":"fr","id":"tok"}`)); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if path != tt.landed {
				t.Fatalf("landed at %q, want %q", path, tt.landed)
			}
			if got.Get("X-Lang") != "fr" {
				t.Errorf("X-Lang %q, want fr: only credentials are dropped", got.Get("X-Lang"))
			}
			for _, h := range append(creds[1:], tt.authHeader) {
				if has := got.Get(h) != ""; has != tt.kept {
					t.Errorf("%s = %q after the redirect, want it kept: %v", h, got.Get(h), tt.kept)
				}
			}
		})
	}
}

// TestCredentialsNeedAFixedOrigin: a tool whose URL's scheme and host are
// a parameter ({url}, https://{host}/…) cannot carry auth or a secret
// header read from the environment: the model would choose where the
// credential goes (any public host passes the guard). It was sent there.
func TestCredentialsNeedAFixedOrigin(t *testing.T) {
	input := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"url": {Type: "string"}, "host": {Type: "string"}, "id": {Type: "string"}}}
	bearer := &Auth{Type: "bearer", Env: "WIELD_TEST_TOKEN"}
	for _, tt := range []struct {
		name string
		spec Spec
		ok   bool
	}{
		{"whole url with auth", Spec{URL: "{url}", Auth: bearer}, false},
		{"host parameter with auth", Spec{URL: "https://{host}/v1/{id}", Auth: bearer}, false},
		{"port parameter with auth", Spec{URL: "https://api.example.com:{id}/v1", Auth: bearer}, false},
		{"whole url with a secret header", Spec{URL: "{url}", Headers: map[string]string{"Authorization": "Bearer ${WIELD_TEST_TOKEN}"}}, false},
		{"whole url with another env header", Spec{URL: "{url}", Headers: map[string]string{"X-Client": "${WIELD_TEST_VERSION}"}}, true},
		{"whole url with a secret header from a parameter", Spec{URL: "{url}", Headers: map[string]string{"Authorization": "{id}"}}, true},
		{"whole url without credentials", Spec{URL: "{url}"}, true},
		{"fixed host with auth", Spec{URL: "https://api.example.com/v1/{id}?h={host}", Auth: bearer}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New("t", "t", input, tt.spec, localOnly())
			if tt.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), "the model would choose where")) {
				t.Fatalf("error %v, want one saying the model would choose where the credential goes", err)
			}
		})
	}
}
