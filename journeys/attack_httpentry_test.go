//go:build unix

package journeys

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestJourneyAttackHTTPEntry: an http entry of a tool file keeps the model
// on the path and the host the file writes, and its credentials with that
// host. A path value ".." (which servers resolve: /v1/users/../profile is
// /v1/profile) is a validation_error and nothing is sent; the file's API
// key does not follow a redirect to another origin; and an entry whose URL
// is a parameter ({url}) cannot carry auth: validate refuses it, since the
// model would choose where the key goes.
func TestJourneyAttackHTTPEntry(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string // path and X-Api-Key of each request, on either server
	)
	record := func(who string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, fmt.Sprintf("%s %s key=%q", who, r.URL.EscapedPath(), r.Header.Get("X-Api-Key")))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok":true}`)
		}
	}
	other, _ := loopbackServer(t, record("other"))
	mux := http.NewServeMux()
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("api /hop key=%q", r.Header.Get("X-Api-Key")))
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
	})
	mux.HandleFunc("/", record("api"))
	api, _ := loopbackServer(t, mux)

	u := newUser(t)
	u.setenv("WIELD_JOURNEY_KEY", "k3y-s3cret")
	u.write("wield.yaml", "http_allow: [127.0.0.1/32]\n")
	entry := func(name, url string) string {
		return `name: ` + name + `
description: Read a user of the directory
parameters:
  - {name: id, type: string}
entry:
  type: http
  url: "` + url + `"
  auth: {type: api_key, name: X-Api-Key, env: WIELD_JOURNEY_KEY}
annotations: {read_only: true, open_world: true}
`
	}
	u.write("tools/user.yaml", entry("user", api.URL+"/v1/users/{id}/profile"))
	u.write("tools/hop.yaml", entry("hop", api.URL+"/hop"))

	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
	call := func(tool, arg string) inputResult {
		t.Helper()
		r := u.wield("--config", "wield.yaml", "--tools", "tools", "call", tool, arg)
		var res inputResult
		r.json(t, &res)
		return res
	}

	if res := call("user", "id=7"); !res.OK {
		t.Fatalf("user id=7: %+v", res)
	}
	if got := take(); len(got) != 1 || got[0] != `api /v1/users/7/profile key="k3y-s3cret"` {
		t.Errorf("id=7 reached %q", got)
	}
	res := call("user", "id=..")
	if res.OK || res.ErrorType != "validation_error" || !strings.Contains(res.Error, `parameter "id"`) {
		t.Errorf("id=..: %+v, want a validation_error naming id", res)
	}
	if got := take(); len(got) != 0 {
		t.Errorf("id=.. sent %q", got)
	}

	if res := call("hop", "id=1"); !res.OK {
		t.Fatalf("hop: %+v", res)
	}
	if got := take(); len(got) != 2 || got[0] != `api /hop key="k3y-s3cret"` || got[1] != `other /landed key=""` {
		t.Errorf("the redirect to another origin: %q, want the key at the API only", got)
	}

	u.write("tools/any.yaml", strings.Replace(entry("any", "{url}"), "{name: id, type: string}", "{name: url, type: string}", 1))
	r := u.wield("validate", "--config", "wield.yaml", "tools")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "tools/any.yaml") || !strings.Contains(r.stdout+r.stderr, "the model would choose where the credential goes") {
		t.Errorf("validate with an entry sending its key to {url}: exit %d\n%s", r.code, r)
	}
}
