package httptool

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

var testInput = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
	"id":    {Type: "string"},
	"query": {Type: "string"},
	"limit": {Type: "integer"},
	"lang":  {Type: "string"},
	"name":  {Type: "string"},
	"tags":  {Type: "array", Items: &jsonschema.Schema{Type: "string"}},
}}

// seen is what the test server received.
type seen struct {
	Method, Path, Query, Body string
	Header                    map[string]string
}

// outcome is what a call produced: the output's status and body, or the
// error's type and the request the server saw.
type outcome struct {
	Status  int
	Body    string
	Seen    *seen
	ErrType wield.ErrorType
}

func TestTool(t *testing.T) {
	jsonReply := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	ok := jsonReply(200, `{"ok":true}`)
	tests := []struct {
		name    string
		spec    Spec // URL relative to the test server
		env     map[string]string
		args    string
		headers []string // request headers to record
		reply   http.HandlerFunc
		want    outcome
	}{{
		name:  "get with path and query templates",
		spec:  Spec{URL: "/v1/users/{id}?q={query}&limit={limit}&lang={lang}", Query: map[string]string{"n": "{name}", "fixed": "a b"}},
		args:  `{"id": "a b/c", "query": "x&y=z", "limit": 5, "name": "Zoë"}`,
		reply: ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "GET", Path: "/v1/users/a%20b%2Fc", Query: "q=x%26y%3Dz&limit=5&fixed=a+b&n=Zo%C3%AB",
		}},
	}, {
		name:    "post with a JSON body template",
		spec:    Spec{Method: "post", URL: "/users", Body: `{"name": "{name}", "tags": "{tags}", "note": "hi {name}, {limit}", "lang": "{lang}", "list": ["{lang}", 1]}`},
		args:    `{"name": "Ann \"A\"", "tags": ["a", "b"], "limit": 3}`,
		headers: []string{"Content-Type"},
		reply:   jsonReply(201, `{"id":7}`),
		want: outcome{Status: 201, Body: `{"id":7}`, Seen: &seen{
			Method: "POST", Path: "/users",
			Body:   `{"list":[null,1],"name":"Ann \"A\"","note":"hi Ann \"A\", 3","tags":["a","b"]}`,
			Header: map[string]string{"Content-Type": "application/json"},
		}},
	}, {
		name:    "put sends unused parameters as the body",
		spec:    Spec{Method: "PUT", URL: "/users/{id}", Headers: map[string]string{"X-Lang": "{lang}"}},
		args:    `{"id": "7", "name": "Ann", "limit": 3, "lang": "fr"}`,
		headers: []string{"Content-Type", "X-Lang"},
		reply:   ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "PUT", Path: "/users/7", Body: `{"limit":3,"name":"Ann"}`,
			Header: map[string]string{"Content-Type": "application/json", "X-Lang": "fr"},
		}},
	}, {
		name:    "text body",
		spec:    Spec{Method: "POST", URL: "/note", Body: "hello {name}!"},
		args:    `{"name": "Ann"}`,
		headers: []string{"Content-Type"},
		reply:   ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "POST", Path: "/note", Body: "hello Ann!",
			Header: map[string]string{"Content-Type": "text/plain; charset=utf-8"},
		}},
	}, {
		name:    "header templates read parameters and the environment",
		spec:    Spec{URL: "/h", Headers: map[string]string{"X-Trace": "{id}-${WIELD_TEST_TRACE}", "X-Missing": "{lang}"}},
		env:     map[string]string{"WIELD_TEST_TRACE": "t1"},
		args:    `{"id": "42"}`,
		headers: []string{"X-Trace", "X-Missing"},
		reply:   ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "GET", Path: "/h", Header: map[string]string{"X-Trace": "42-t1", "X-Missing": ""},
		}},
	}, {
		name:    "api key in a header",
		spec:    Spec{URL: "/k", Auth: &Auth{Type: "api_key", Name: "X-Api-Token", Env: "WIELD_TEST_KEY"}},
		env:     map[string]string{"WIELD_TEST_KEY": "s3cret"},
		args:    `{}`,
		headers: []string{"X-Api-Token"},
		reply:   ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "GET", Path: "/k", Header: map[string]string{"X-Api-Token": "s3cret"},
		}},
	}, {
		name:  "api key in the query",
		spec:  Spec{URL: "/k?q={query}", Auth: &Auth{Type: "api_key", In: "query", Name: "api_key", Env: "WIELD_TEST_KEY"}},
		env:   map[string]string{"WIELD_TEST_KEY": "s3 cret"},
		args:  `{"query": "go"}`,
		reply: ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "GET", Path: "/k", Query: "api_key=s3+cret&q=go",
		}},
	}, {
		name:    "bearer token",
		spec:    Spec{URL: "/b", Auth: &Auth{Type: "bearer", Env: "WIELD_TEST_TOKEN"}},
		env:     map[string]string{"WIELD_TEST_TOKEN": "tok"},
		args:    `{}`,
		headers: []string{"Authorization"},
		reply:   ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "GET", Path: "/b", Header: map[string]string{"Authorization": "Bearer tok"},
		}},
	}, {
		name:    "basic auth",
		spec:    Spec{URL: "/basic", Auth: &Auth{Type: "basic", Env: "WIELD_TEST_USER:WIELD_TEST_PASS"}},
		env:     map[string]string{"WIELD_TEST_USER": "ann", "WIELD_TEST_PASS": "pw"},
		args:    `{}`,
		headers: []string{"Authorization"},
		reply:   ok,
		want: outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{
			Method: "GET", Path: "/basic", Header: map[string]string{"Authorization": "Basic YW5uOnB3"},
		}},
	}, {
		name: "missing auth variable",
		spec: Spec{URL: "/b", Auth: &Auth{Type: "bearer", Env: "WIELD_TEST_UNSET_TOKEN"}},
		args: `{}`,
		want: outcome{ErrType: wield.ErrExecution},
	}, {
		name: "missing header variable",
		spec: Spec{URL: "/b", Headers: map[string]string{"X-Key": "${WIELD_TEST_UNSET_KEY}"}},
		args: `{}`,
		want: outcome{ErrType: wield.ErrExecution},
	}, {
		name: "missing path parameter",
		spec: Spec{URL: "/users/{id}"},
		args: `{}`,
		want: outcome{ErrType: wield.ErrValidation},
	}, {
		name: "text response",
		spec: Spec{URL: "/t"},
		args: `{}`,
		reply: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "hello\n")
		},
		want: outcome{Status: 200, Body: `"hello\n"`, Seen: &seen{Method: "GET", Path: "/t"}},
	}, {
		name:  "JSON content type that is not JSON",
		spec:  Spec{URL: "/t"},
		args:  `{}`,
		reply: jsonReply(200, `{not json`),
		want:  outcome{Status: 200, Body: `"{not json"`, Seen: &seen{Method: "GET", Path: "/t"}},
	}, {
		name: "problem+json",
		spec: Spec{URL: "/t"},
		args: `{}`,
		reply: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/problem+json")
			io.WriteString(w, `[1]`)
		},
		want: outcome{Status: 200, Body: `[1]`, Seen: &seen{Method: "GET", Path: "/t"}},
	}, {
		name:  "non-2xx is output, not an error",
		spec:  Spec{Method: "DELETE", URL: "/users/{id}"},
		args:  `{"id": "9"}`,
		reply: jsonReply(404, `{"error":"no such user"}`),
		want:  outcome{Status: 404, Body: `{"error":"no such user"}`, Seen: &seen{Method: "DELETE", Path: "/users/9"}},
	}, {
		name:  "response at the limit",
		spec:  Spec{URL: "/big", MaxResponse: 10},
		args:  `{}`,
		reply: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "0123456789") },
		want:  outcome{Status: 200, Body: `"0123456789"`, Seen: &seen{Method: "GET", Path: "/big"}},
	}, {
		name:  "response over the limit",
		spec:  Spec{URL: "/big", MaxResponse: 10},
		args:  `{}`,
		reply: func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "0123456789A") },
		want:  outcome{ErrType: wield.ErrExecution, Seen: &seen{Method: "GET", Path: "/big"}},
	}, {
		name:  "local redirect is followed",
		spec:  Spec{URL: "/old"},
		args:  `{}`,
		reply: nil, // see the server below: /old redirects to /new
		want:  outcome{Status: 200, Body: `{"ok":true}`, Seen: &seen{Method: "GET", Path: "/new"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var (
				mu  sync.Mutex
				got outcome
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/old" {
					http.Redirect(w, r, "/new", http.StatusFound)
					return
				}
				body, _ := io.ReadAll(r.Body)
				s := &seen{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: string(body)}
				for _, h := range tt.headers {
					if s.Header == nil {
						s.Header = map[string]string{}
					}
					s.Header[h] = r.Header.Get(h)
				}
				mu.Lock()
				got.Seen = s
				mu.Unlock()
				if tt.reply != nil {
					tt.reply(w, r)
				} else {
					ok(w, r)
				}
			}))
			defer srv.Close()
			spec := tt.spec
			spec.URL = srv.URL + spec.URL
			tool, err := New("t", "test tool", testInput, spec, localOnly())
			if err != nil {
				t.Fatal(err)
			}
			out, err := tool.Handler.Handle(context.Background(), json.RawMessage(tt.args))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				var we *wield.Error
				if !errors.As(err, &we) {
					t.Fatalf("error %v is not a *wield.Error", err)
				}
				got.ErrType = we.Type
				for _, v := range tt.spec.Auth.envs() {
					if _, set := tt.env[v]; !set && !strings.Contains(we.Message, v) {
						t.Errorf("message %q does not name the variable %s", we.Message, v)
					}
				}
			} else {
				var o Output
				if err := json.Unmarshal(out, &o); err != nil {
					t.Fatalf("output %s: %v", out, err)
				}
				got.Status, got.Body = o.StatusCode, string(o.Body)
				if o.Headers["Content-Length"] == "" && o.Headers["Content-Type"] == "" {
					t.Errorf("output headers %v lack the response's headers", o.Headers)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// envs lists the variables an Auth reads, for the test's message check.
func (a *Auth) envs() []string {
	if a == nil {
		return nil
	}
	if a.Type == "basic" {
		return strings.Split(a.Env, ":")
	}
	return []string{a.Env}
}

func TestToolTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	tool, err := New("slow", "slow", testInput, Spec{URL: srv.URL, Timeout: 50 * time.Millisecond}, localOnly())
	if err != nil {
		t.Fatal(err)
	}
	_, err = tool.Handler.Handle(context.Background(), json.RawMessage(`{}`))
	var we *wield.Error
	if !errors.As(err, &we) || we.Type != wield.ErrTimeout {
		t.Fatalf("error %v, want a *wield.Error of type timeout", err)
	}
	if !wield.IsTransient(err) {
		t.Errorf("timeout %v is not transient", err)
	}
}

func TestToolTransportError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	tool, err := New("gone", "gone", testInput, Spec{URL: url + "/x?key={query}"}, localOnly())
	if err != nil {
		t.Fatal(err)
	}
	_, err = tool.Handler.Handle(context.Background(), json.RawMessage(`{"query": "SECRET"}`))
	var we *wield.Error
	if !errors.As(err, &we) || we.Type != wield.ErrExecution || !wield.IsTransient(err) {
		t.Fatalf("error %v, want a transient execution_error", err)
	}
	if strings.Contains(we.Message, "SECRET") {
		t.Errorf("message %q shows the query", we.Message)
	}
}

func TestNewAnnotations(t *testing.T) {
	tests := []struct {
		method string
		want   wield.Annotations
	}{
		{"", wield.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		{"GET", wield.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		{"HEAD", wield.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}},
		{"POST", wield.Annotations{OpenWorld: true}},
		{"PATCH", wield.Annotations{OpenWorld: true}},
		{"PUT", wield.Annotations{Idempotent: true, OpenWorld: true}},
		{"delete", wield.Annotations{Idempotent: true, Destructive: true, OpenWorld: true}},
	}
	for _, tt := range tests {
		tool, err := New("t", "d", testInput, Spec{Method: tt.method, URL: "https://api.example.com/"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, tool.Annotations); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.method, diff)
		}
		if tool.Category != wield.CategoryHTTP {
			t.Errorf("%q: category %q, want http", tt.method, tool.Category)
		}
		if err := tool.Check(); err != nil {
			t.Errorf("%q: %v", tt.method, err)
		}
	}
}

func TestNewInvalid(t *testing.T) {
	const base = "https://api.example.com"
	tests := []struct {
		name string
		spec Spec
		want string // in the error
	}{
		{"bad method", Spec{Method: "FETCH", URL: base}, `method "FETCH" is not one of`},
		{"no url", Spec{}, "no url"},
		{"not http", Spec{URL: "ftp://example.com/{id}"}, "does not start with http:// or https://"},
		{"unknown url placeholder", Spec{URL: base + "/users/{user}"}, "url refers to {user}, which is not an input property"},
		{"unknown query placeholder", Spec{URL: base + "/s?q={q}"}, "url refers to {q}"},
		{"unknown extra query placeholder", Spec{URL: base, Query: map[string]string{"a": "{zz}"}}, "query a refers to {zz}"},
		{"unknown header placeholder", Spec{URL: base, Headers: map[string]string{"X-A": "{zz}"}}, "header X-A refers to {zz}"},
		{"bad header name", Spec{URL: base, Headers: map[string]string{"X A": "1"}}, `header name "X A" is not valid`},
		{"unknown body placeholder", Spec{Method: "POST", URL: base, Body: `{"a": "{zz}"}`}, "body refers to {zz}"},
		{"bad auth type", Spec{URL: base, Auth: &Auth{Type: "oauth", Env: "X"}}, `auth type "oauth" is not api_key, bearer or basic`},
		{"api key without env", Spec{URL: base, Auth: &Auth{Type: "api_key"}}, "api_key needs env"},
		{"api key in query without name", Spec{URL: base, Auth: &Auth{Type: "api_key", In: "query", Env: "K"}}, "needs a name"},
		{"api key in body", Spec{URL: base, Auth: &Auth{Type: "api_key", In: "body", Env: "K"}}, `in "body" is not header or query`},
		{"bearer without env", Spec{URL: base, Auth: &Auth{Type: "bearer"}}, "bearer needs env"},
		{"basic with one variable", Spec{URL: base, Auth: &Auth{Type: "basic", Env: "USER"}}, "is not USER_ENV:PASS_ENV"},
		{"negative limit", Spec{URL: base, MaxResponse: -1}, "max response -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New("bad", "d", testInput, tt.spec, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), `http tool "bad": `) {
				t.Errorf("error %v, want one that contains %q", err, tt.want)
			}
		})
	}
}
