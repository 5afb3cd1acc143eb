package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/sqlite"
)

// TestApprovalsServer lists and decides a running server's pending call
// with --server: the server's inbox, not the local store's (which --server
// used to be ignored for, so list showed nothing and approve found no
// approval).
func TestApprovalsServer(t *testing.T) {
	s := startServe(t, "")
	c := httpapi.NewClient(s.url, "")
	done := make(chan *wield.Result, 1)
	go func() {
		res, err := c.Call(context.Background(), "guarded_echo", httpapi.CallRequest{Arguments: json.RawMessage(`{"message":"remote"}`)})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	p := waitPending(t, c)

	code, out, errs := run(t, "approvals", "list", "--server", s.url, "--json")
	if code != 0 {
		t.Fatalf("approvals list --server: exit %d\n%s%s", code, out, errs)
	}
	var list []*wield.Approval
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("approvals list --server --json: %v\n%s", err, out)
	}
	if len(list) != 1 || list[0].ID != p.ID || list[0].Tool != "guarded_echo" {
		t.Fatalf("approvals list --server: %s", out)
	}
	code, out, errs = run(t, "approvals", "list", "--server", s.url)
	if code != 0 || !strings.Contains(out, p.ID) || !strings.Contains(out, "guarded_echo") {
		t.Errorf("approvals list --server (table): exit %d\n%s%s", code, out, errs)
	}

	if code, out, errs := run(t, "approvals", "approve", "nope", "--server", s.url); code != 2 || !strings.Contains(errs, "no approval nope") {
		t.Errorf("approve of an unknown approval: exit %d\n%s%s", code, out, errs)
	}
	if code, out, errs := run(t, "approvals", "approve", p.ID, "--server", s.url, "--digest", "sha256:other"); code != 1 || !strings.Contains(errs, "other arguments than --digest") {
		t.Errorf("approve with another digest: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = run(t, "approvals", "approve", p.ID, "--server", s.url, "--note", "over the API")
	if code != 0 || !strings.HasPrefix(out, "approved "+p.ID+": guarded_echo") {
		t.Fatalf("approvals approve --server: exit %d\n%s%s", code, out, errs)
	}
	select {
	case res := <-done:
		if res == nil || !res.OK {
			t.Errorf("the approved call: %+v", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not return within 30 s of the approval")
	}
	if code, out, errs := run(t, "approvals", "deny", p.ID, "--server", s.url); code != 1 || !strings.Contains(errs, "no longer pending") {
		t.Errorf("second decision: exit %d\n%s%s", code, out, errs)
	}
	// The server says who decided: the CLI's key (here, the local user of
	// a server without keys), with the CLI's note.
	code, out, _ = run(t, "approvals", "list", "--server", s.url, "--status", "approved", "--json")
	list = nil
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list) != 1 || list[0].Decision == nil ||
		list[0].Decision.By != "local user" || list[0].Decision.Note != "over the API" {
		t.Errorf("approved approvals over --server: exit %d, %v\n%s", code, err, out)
	}
}

// TestApprovalsListClipsOnCharacter lists a pending approval whose
// arguments are longer than the table's 60 bytes, with a "€" across the
// 60th byte: the cell ends at the character before it, with "…". The cut
// used to fall inside the "€", and the table showed its first bytes as
// \xe2\x82.
func TestApprovalsListClipsOnCharacter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 13 bytes, then "€"s of 3 bytes: the 16th is bytes 58 to 60.
	args := `{"message":"x` + strings.Repeat("€", 30) + `"}`
	err = s.CreateApproval(ctx, &wield.ApprovalRequest{ID: "ap1", CallID: "c1", Tool: "guarded_echo",
		Arguments: json.RawMessage(args), Digest: "sha256:x", ExpiresAt: time.Now().Add(time.Hour)})
	if cerr := s.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	code, out, errs := run(t, "approvals", "list", "--db", "sqlite:"+path)
	if code != 0 {
		t.Fatalf("approvals list: exit %d\n%s%s", code, out, errs)
	}
	want := `{"message":"x` + strings.Repeat("€", 15) + "…"
	if !utf8.ValidString(out) || strings.Contains(out, `\x`) || !strings.Contains(out, want) {
		t.Errorf("approvals list: the arguments cell is not %q (valid UTF-8: %v):\n%s", want, utf8.ValidString(out), out)
	}
	if line := lineWith(out, "ap1"); !strings.HasSuffix(line, "…") {
		t.Errorf("approvals list: the approval's line does not end with \"…\": %q", line)
	}
}

// lineWith is the first line of out that holds s, without its newline
// and trailing spaces ("" for none).
func lineWith(out, s string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, s) {
			return strings.TrimRight(line, " \n")
		}
	}
	return ""
}
