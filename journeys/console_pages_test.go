//go:build unix

package journeys

// The console's new pages stand on REST endpoints a person can use
// without it: who a key is (GET /v1/whoami), and the API keys (GET and
// POST /v1/keys, DELETE /v1/keys/{id}) under the keys right, working on
// the same keys file as `wield keys`.

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJourneyConsoleKeys: an administrator's key made with `wield keys
// create --rights ...,keys` makes, lists and revokes keys through the real
// server; a key without the right is refused (403, naming it), and so is
// one that would grant a right it lacks; a key made over REST works at
// once, shows in `wield keys list`, and is refused at once once revoked.
// A server without keys lists but does not make keys, and says how.
func TestJourneyConsoleKeys(t *testing.T) {
	u := newUser(t)
	if r := u.wield("keys", "create", "--rights", "read,keys", "--toolset", "math"); r.code != 2 || !strings.Contains(r.stderr, "--rights keys with --toolset") {
		t.Errorf("a scoped keys key: want exit 2 saying why:\n%s", r)
	}
	admin, adminID := makeKey(t, u, "--name", "admin", "--rights", "call,approve,keys")
	reader, _ := makeKey(t, u, "--name", "dashboard", "--rights", "read")
	s := u.serve()

	status, b := s.do("GET", "/v1/whoami", "", bearer(admin))
	var who struct {
		Required bool `json:"required"`
		Key      struct {
			ID, Name string
		} `json:"key"`
		Rights []string `json:"rights"`
	}
	if err := json.Unmarshal(b, &who); status != 200 || err != nil {
		t.Fatalf("GET /v1/whoami: %d %s", status, b)
	}
	if !who.Required || who.Key.ID != adminID || who.Key.Name != "admin" || strings.Join(who.Rights, ",") != "read,call,approve,keys" {
		t.Errorf("whoami of the admin key = %+v", who)
	}
	if status, b := s.do("GET", "/v1/whoami", "", bearer(reader)); status != 200 || !strings.Contains(string(b), `"rights":["read"]`) {
		t.Errorf("whoami of the read key: %d %s", status, b)
	}
	if status, _ := s.do("GET", "/v1/whoami", ""); status != 401 {
		t.Errorf("whoami without a key: %d; want 401", status)
	}

	// Without the keys right: refused, saying which right.
	for _, req := range [][2]string{{"GET", "/v1/keys"}, {"POST", "/v1/keys"}, {"DELETE", "/v1/keys/" + adminID}} {
		body := ""
		if req[0] == "POST" {
			body = `{"name":"mine","rights":["call"]}`
		}
		if status, b := s.do(req[0], req[1], body, bearer(reader)); status != 403 || !strings.Contains(string(b), `lacks the \"keys\" right`) {
			t.Errorf("%s %s with the read key: %d %s; want 403 naming the keys right", req[0], req[1], status, b)
		}
	}
	if status, b := s.do("POST", "/v1/keys", `{"name":"wf","rights":["call","workflow"]}`, bearer(admin)); status != 403 || !strings.Contains(string(b), `\"workflow\"`) {
		t.Errorf("granting a right the admin lacks: %d %s; want 403", status, b)
	}

	status, b = s.do("POST", "/v1/keys", `{"name":"agent","rights":["call"]}`, bearer(admin))
	var made struct {
		Key struct {
			ID string `json:"id"`
		} `json:"key"`
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(b, &made); status != 201 || err != nil || !strings.HasPrefix(made.Secret, "wield_") {
		t.Fatalf("POST /v1/keys: %d %s", status, b)
	}
	if status, b := s.do("POST", "/v1/tools/echo/call", `{"arguments":{"message":"hi"}}`, bearer(made.Secret)); status != 200 || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("a call with the key just made: %d %s", status, b)
	}
	if r := u.must("keys", "list"); !strings.Contains(r.stdout, made.Key.ID) || !strings.Contains(r.stdout, "agent") {
		t.Errorf("wield keys list does not show the key made over REST:\n%s", r)
	}
	status, b = s.do("GET", "/v1/keys", "", bearer(admin))
	if status != 200 || !strings.Contains(string(b), made.Key.ID) || strings.Contains(string(b), "sha256") || strings.Contains(string(b), made.Secret) {
		t.Errorf("GET /v1/keys: %d %s; want the keys, never a hash or a secret", status, b)
	}

	if status, b := s.do("DELETE", "/v1/keys/agent", "", bearer(admin)); status != 200 || !strings.Contains(string(b), `"revoked":true`) {
		t.Errorf("DELETE /v1/keys/agent: %d %s", status, b)
	}
	if status, _ := s.do("POST", "/v1/tools/echo/call", `{"arguments":{"message":"hi"}}`, bearer(made.Secret)); status != 401 {
		t.Errorf("a call with the revoked key: %d; want 401 at once", status)
	}
	if r := u.must("keys", "list"); !strings.Contains(r.stdout, "revoked") {
		t.Errorf("wield keys list after the REST revocation:\n%s", r)
	}
	// The console's pages are served beside the API.
	for _, p := range []string{"/keys.js", "/limiter.js", "/toolsets.js", "/who.js"} {
		if status, _ := s.do("GET", p, ""); status != 200 {
			t.Errorf("GET %s: %d", p, status)
		}
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("stop: exit %d after %v", code, took)
	}

	// Without keys: listed, not made.
	open := newUser(t).serve()
	if status, b := open.do("POST", "/v1/keys", `{"name":"first","rights":["call"]}`); status != 409 || !strings.Contains(string(b), "wield keys create") {
		t.Errorf("POST /v1/keys without keys: %d %s; want 409 saying how", status, b)
	}
	if status, b := open.do("GET", "/v1/whoami", ""); status != 200 || !strings.Contains(string(b), `"required":false`) || strings.Contains(string(b), `"keys"]`) {
		t.Errorf("whoami without keys: %d %s", status, b)
	}
	if code, _ := open.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("stop: exit %d", code)
	}
}

// TestJourneyApprovalCallerWaits: the approval inbox says, through the real
// server, whether the caller of a pending call still waits ("here") or
// left ("none": the server runs the call for the record once decided), and
// who asked (the user the caller named); a call's approvals are found by
// its ID once decided, with who decided.
func TestJourneyApprovalCallerWaits(t *testing.T) {
	u := newUser(t)
	u.write("tools/mark.yaml", markTool)
	s := u.serve("--tools", "tools")

	answered := make(chan string, 1)
	go func() {
		c := &http.Client{Timeout: commandLimit}
		resp, err := c.Post(s.url+"/v1/tools/mark/call", "application/json", strings.NewReader(`{"arguments":{"message":"one"},"caller":{"user_id":"ada"}}`))
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- string(b)
	}()
	pendingIDs(t, u, 1)
	abandon(t, s, "mark", `{"message":"two"}`)
	ids := pendingIDs(t, u, 2)

	type pending struct {
		ID          string `json:"id"`
		CallID      string `json:"call_id"`
		CallerWaits string `json:"caller_waits"`
		Caller      struct {
			UserID string `json:"user_id"`
		} `json:"caller"`
		Decision *struct {
			By string `json:"by"`
		} `json:"decision"`
	}
	var list struct {
		Approvals []pending `json:"approvals"`
	}
	// The server hears that the second caller left as the request ends.
	if !eventually(5*time.Second, func() bool {
		status, b := s.do("GET", "/v1/approvals", "")
		if status != 200 || json.Unmarshal(b, &list) != nil || len(list.Approvals) != 2 {
			return false
		}
		return list.Approvals[0].CallerWaits == "here" && list.Approvals[1].CallerWaits == "none"
	}) {
		t.Fatalf("caller_waits of the waiting and the abandoned call: %+v; want here, none", list.Approvals)
	}
	if got := list.Approvals[0].Caller.UserID; got != "ada" {
		t.Errorf("the waiting call's user = %q, want ada", got)
	}

	u.must("approvals", "approve", ids[0])
	select {
	case b := <-answered:
		if !strings.Contains(b, `"ok":true`) {
			t.Errorf("the waiting caller got %s", b)
		}
	case <-time.After(commandLimit):
		t.Fatal("the waiting caller got no answer")
	}
	u.must("approvals", "deny", ids[1])
	status, b := s.do("GET", "/v1/approvals?call_id="+list.Approvals[0].CallID, "")
	var mine struct {
		Approvals []pending `json:"approvals"`
	}
	if err := json.Unmarshal(b, &mine); status != 200 || err != nil || len(mine.Approvals) != 1 {
		t.Fatalf("the approvals of the call: %d %s", status, b)
	}
	if a := mine.Approvals[0]; a.ID != ids[0] || a.CallerWaits != "" || a.Decision == nil || !strings.HasPrefix(a.Decision.By, "cli:") {
		t.Errorf("the decided approval of the call: %+v; want its ID, decided by the CLI, no caller_waits", a)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 || took > 5*time.Second {
		t.Errorf("stop: exit %d after %v", code, took)
	}
}
