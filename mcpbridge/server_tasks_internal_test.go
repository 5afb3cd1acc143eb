package mcpbridge

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// TestTasksBounded checks that a client cannot make the server hold more
// tasks than the bounds: past its share a task-required call is refused
// with a message saying why, a task-optional one runs as a plain call, and
// another client still gets tasks; nothing of a client stays once its
// tasks end.
func TestTasksBounded(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	type none struct{}
	hold := wield.Func("hold", "Waits for its end.", func(ctx context.Context, _ none) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	hold.Task = wield.TaskRequired
	maybe := wield.Func("maybe", "Answers at once.", func(context.Context, none) (string, error) { return "plain", nil })
	maybe.Task = wield.TaskOptional
	reg := wield.NewRegistry(nil)
	reg.MustRegister(hold, maybe)
	eng := engine.New(reg, &engine.Options{Store: store})
	defer eng.Close(ctx)
	s := NewServer(eng, reg, &ServerOptions{Calls: store})
	s.tasks.max, s.tasks.maxPerClient = 3, 2
	h := s.Handler()
	call := func(tool, from string) (result map[string]any, errMsg string) {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":{},`+meta+`}}`))
		r.Host, r.RemoteAddr = "127.0.0.1", from+":1234"
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool} {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var msg struct {
			Result map[string]any
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &msg); err != nil {
			t.Fatalf("%s: %q", tool, w.Body.String())
		}
		if msg.Error != nil {
			return nil, msg.Error.Message
		}
		return msg.Result, ""
	}
	for range 2 {
		if res, e := call("hold", "127.0.0.2"); e != "" || res["resultType"] != "task" {
			t.Fatalf("a task within the bounds: %v %q", res, e)
		}
	}
	if _, e := call("hold", "127.0.0.2"); !strings.Contains(e, "as many tasks as it takes (3, 2 per client)") {
		t.Errorf("a third task of one client: %q, want refused with the bounds", e)
	}
	if res, _ := call("maybe", "127.0.0.2"); res["resultType"] != "complete" {
		t.Errorf("a task-optional call past the bound = %v, want the plain result", res)
	}
	if res, e := call("hold", "127.0.0.3"); e != "" || res["resultType"] != "task" {
		t.Errorf("another client's task: %v %q", res, e)
	}
	if _, e := call("hold", "127.0.0.4"); e == "" {
		t.Errorf("a task past the server's bound was started")
	}
	s.Close()
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if len(s.tasks.running) != 0 || len(s.tasks.byClient) != 0 {
		t.Errorf("after Close: %d tasks, %d clients kept", len(s.tasks.running), len(s.tasks.byClient))
	}
}

// TestCancelNoteCarriesOwner: a tasks/cancel sent to another server reaches
// the server running the task with the asker's owner, which cancels only
// its owner's task (or one started without a requester).
func TestCancelNoteCarriesOwner(t *testing.T) {
	for _, tt := range []struct {
		note, id, owner string
		ok              bool
	}{
		{srvTaskCancelNote + "task1 abc", "task1", "abc", true},
		{srvTaskCancelNote + "task1 ", "task1", "", true},
		{srvTaskCancelNote + "task1", "task1", "", true}, // an older server's note: no owner
		{srvTaskCancelNote, "", "", false},
		{"approval-42", "", "", false},
	} {
		id, owner, ok := srvReadCancelNote(tt.note)
		if id != tt.id || owner != tt.owner || ok != tt.ok {
			t.Errorf("srvReadCancelNote(%q) = %q, %q, %v; want %q, %q, %v", tt.note, id, owner, ok, tt.id, tt.owner, tt.ok)
		}
	}
	owned, open := &srvTask{owner: "abc"}, &srvTask{}
	if !owned.cancelableBy("abc") || owned.cancelableBy("xyz") || owned.cancelableBy("") {
		t.Error("a task with an owner: only its owner may cancel it")
	}
	if !open.cancelableBy("") || !open.cancelableBy("xyz") {
		t.Error("a task started without a requester: anyone with its ID may cancel it")
	}
}

// TestTaskOwnerKept: the owner digest kept by requester is the digest
// made from it, and none without a requester.
func TestTaskOwnerKept(t *testing.T) {
	ctx := wield.WithRequester(context.Background(), "key:owner-kept")
	want := srvStateWho("task owner\x00key:owner-kept")
	for range 3 {
		if got := srvTaskOwner(ctx); got != want {
			t.Fatalf("owner %q, want %q", got, want)
		}
	}
	if got := srvTaskOwner(context.Background()); got != "" {
		t.Errorf("no requester: owner %q, want none", got)
	}
}

// BenchmarkTaskOwner compares the owner of a task read: kept by requester
// (now) and its digest made again (before, per read and twice per launch).
func BenchmarkTaskOwner(b *testing.B) {
	ctx := wield.WithRequester(context.Background(), "key:bench-owner")
	b.Run("kept", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if srvTaskOwner(ctx) == "" {
				b.Fatal("no owner")
			}
		}
	})
	b.Run("digest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if srvStateWho("task owner\x00"+wield.RequesterFrom(ctx)) == "" {
				b.Fatal("no owner")
			}
		}
	})
}

// TestLeaseOwnerClipsHostOnCharacter names a server on a host whose name
// is over 64 bytes by the name's last whole character within them, with
// "…": the lease owner is stored as text, and the cut used to fall inside
// an "é", leaving invalid UTF-8 (which PostgreSQL refuses in text).
func TestLeaseOwnerClipsHostOnCharacter(t *testing.T) {
	// "h", then "é"s of 2 bytes: the 32nd is bytes 63 and 64.
	got := srvLeaseOwnerOn("h" + strings.Repeat("é", 40))
	if want := "h" + strings.Repeat("é", 31) + "… pid "; !utf8.ValidString(got) || !strings.HasPrefix(got, want) {
		t.Errorf("owner %q, want valid UTF-8 starting %q", got, want)
	}
	if got := srvLeaseOwnerOn(""); !strings.HasPrefix(got, "? pid ") {
		t.Errorf("owner on a host of no name %q, want it to start \"? pid \"", got)
	}
}
