//go:build unix

package journeys

// Artifacts and call IDs, attacked through the binary: a key scoped to the
// math toolset reads and overwrites another key's artifact, over REST and
// through the artifact tools; a client guesses the ID of another's artifact
// from two IDs of its own; a client reuses a call ID so that its call runs
// with no record of its own. Each is what a prompt-injected model holding
// a key would try.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mathWithArtifacts is the toolset of key A: arithmetic, and the artifact
// tools for its own notes.
const mathWithArtifacts = `name: math
description: arithmetic, with notes
tools:
  - calculator
  - create_artifact
  - read_artifact
  - update_artifact
  - rewrite_artifact
`

// toolCall is the result of a call as REST answers it.
type toolCall struct {
	CallID    string          `json:"call_id"`
	OK        bool            `json:"ok"`
	ErrorType string          `json:"error_type"`
	Error     string          `json:"error"`
	Output    json.RawMessage `json:"output"`
}

// callAs posts a call of tool with key and returns its result.
func callAs(t *testing.T, s *server, key, tool, body string) toolCall {
	t.Helper()
	code, b := s.do("POST", "/v1/tools/"+tool+"/call", body, bearer(key))
	var res toolCall
	if code != 200 || json.Unmarshal(b, &res) != nil {
		t.Fatalf("POST /v1/tools/%s/call %s: %d %s", tool, body, code, b)
	}
	return res
}

// artifactOf reads an artifact over REST as key: status and content.
func artifactOf(t *testing.T, s *server, key, id string) (int, string, int) {
	t.Helper()
	code, b := s.do("GET", "/v1/artifacts/"+id, "", bearer(key))
	var a struct {
		Content string `json:"content"`
		Version int    `json:"version"`
	}
	_ = json.Unmarshal(b, &a)
	return code, a.Content, a.Version
}

// TestJourneyAttackArtifactsOtherKey: key A (call right, toolset math with
// the artifact tools) knows the IDs of key B's artifacts, one made over
// REST and one by B's model with create_artifact. Over REST, reading,
// patching and rewriting them answer 404 not_found, as for IDs that do not
// exist; through the tools, read_artifact, update_artifact and
// rewrite_artifact say there is no such artifact. B's artifacts are
// unchanged, and A's own work as before.
func TestJourneyAttackArtifactsOtherKey(t *testing.T) {
	u := newUser(t)
	u.write("configs/tool_sets/math.yaml", mathWithArtifacts)
	a, _ := makeKey(t, u, "--name", "a", "--toolset", "math", "--rights", "call", "--tools", "configs")
	b, _ := makeKey(t, u, "--name", "b", "--rights", "call")
	s := u.serve("--tools", "configs")

	code, body := s.do("POST", "/v1/artifacts", `{"title":"payroll","content":"B's payroll: 1000"}`, bearer(b))
	var made struct{ ID string }
	if code != 201 || json.Unmarshal(body, &made) != nil || made.ID == "" {
		t.Fatalf("B creates over REST: %d %s", code, body)
	}
	res := callAs(t, s, b, "create_artifact", `{"arguments":{"title":"plan","content":"B's plan: ship friday"},"caller":{"id":"agent-b","conversation_id":"conv-b"}}`)
	var byTool struct{ ID string }
	if !res.OK || json.Unmarshal(res.Output, &byTool) != nil || byTool.ID == "" {
		t.Fatalf("B's model creates with create_artifact: %+v", res)
	}

	for _, id := range []string{made.ID, byTool.ID} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/v1/artifacts/" + id, ""},
			{"GET", "/v1/artifacts/" + id + "?version=1", ""},
			{"PATCH", "/v1/artifacts/" + id, `{"old":"B's","new":"A owns"}`},
			{"PUT", "/v1/artifacts/" + id, `{"content":"overwritten by A"}`},
		} {
			code, body := s.do(c.method, c.path, c.body, bearer(a))
			if code != 404 || !strings.Contains(string(body), `"not_found"`) {
				t.Errorf("key A %s %s: %d %s, want 404 not_found", c.method, c.path, code, body)
			}
		}
		// A's model, told the ID by a page it read, in B's conversation
		// and in none.
		for _, conv := range []string{"conv-b", ""} {
			caller := `"caller":{"id":"agent-a","conversation_id":"` + conv + `"}`
			for _, c := range []struct{ tool, args string }{
				{"read_artifact", `{"id":"` + id + `"}`},
				{"update_artifact", `{"id":"` + id + `","old":"B's","new":"A owns"}`},
				{"rewrite_artifact", `{"id":"` + id + `","content":"overwritten by A's model"}`},
			} {
				res := callAs(t, s, a, c.tool, `{"arguments":`+c.args+`,`+caller+`}`)
				if res.OK || res.ErrorType != "validation_error" || !strings.Contains(res.Error, "there is no artifact with id") || strings.Contains(string(res.Output), "B's") {
					t.Errorf("key A's %s of %s in %q: %+v, want there is no artifact", c.tool, id, conv, res)
				}
			}
		}
	}
	for id, want := range map[string]string{made.ID: "B's payroll: 1000", byTool.ID: "B's plan: ship friday"} {
		if code, content, version := artifactOf(t, s, b, id); code != 200 || content != want || version != 1 {
			t.Errorf("B reads %s after A's attempts: %d %q version %d, want %q version 1", id, code, content, version, want)
		}
	}

	// A's own artifacts work as before, over REST and through the tools.
	res = callAs(t, s, a, "create_artifact", `{"arguments":{"content":"A's note"}}`)
	var mine struct{ ID string }
	if !res.OK || json.Unmarshal(res.Output, &mine) != nil {
		t.Fatalf("A creates its own: %+v", res)
	}
	if res := callAs(t, s, a, "rewrite_artifact", `{"arguments":{"id":"`+mine.ID+`","content":"A's note, v2"}}`); !res.OK {
		t.Errorf("A rewrites its own: %+v", res)
	}
	if code, content, version := artifactOf(t, s, a, mine.ID); code != 200 || content != "A's note, v2" || version != 2 {
		t.Errorf("A reads its own over REST: %d %q %d", code, content, version)
	}
	if code, _, _ := artifactOf(t, s, b, mine.ID); code != 404 {
		t.Errorf("B reads A's: %d, want 404", code)
	}
}

// idBits decodes an ID of 27 lowercase Crockford base32 characters.
func idBits(t *testing.T, id string) *big.Int {
	t.Helper()
	const digits = "0123456789abcdefghjkmnpqrstvwxyz"
	id = strings.TrimPrefix(id, "art_")
	n := new(big.Int)
	if len(id) != 27 {
		t.Fatalf("id %q is not 27 characters", id)
	}
	for _, c := range id {
		d := strings.IndexRune(digits, c)
		if d < 0 {
			t.Fatalf("id %q: %q is not lowercase Crockford base32", id, c)
		}
		n.Lsh(n, 5).Or(n, big.NewInt(int64(d)))
	}
	return n
}

// TestJourneyAttackGuessArtifactID: a client makes an artifact, a victim
// makes one, the client makes another, and the client guesses the victim's
// ID from its two (IDs of one process used to differ by a counter: seven
// guesses found it). Even the victim's own key, which could read it, finds
// nothing at the guesses; and across 40 IDs made one after the other, each
// of the 83 bits after the time changes between some consecutive two.
func TestJourneyAttackGuessArtifactID(t *testing.T) {
	u := newUser(t)
	s := u.serve()
	create := func(content string) string {
		t.Helper()
		code, body := s.do("POST", "/v1/artifacts", `{"content":"`+content+`"}`)
		var a struct{ ID string }
		if code != 201 || json.Unmarshal(body, &a) != nil || !strings.HasPrefix(a.ID, "art_") {
			t.Fatalf("create: %d %s", code, body)
		}
		return a.ID
	}
	first := create("mine 1")
	victim := create("victim's")
	second := create("mine 2")

	// The guesses: up to 64 steps on from the first ID and back from the
	// second, and every ID between them when there are few.
	x, y := idBits(t, first), idBits(t, second)
	guesses := map[string]bool{}
	encode := func(n *big.Int) string {
		const digits = "0123456789abcdefghjkmnpqrstvwxyz"
		var out [27]byte
		m := new(big.Int).Set(n)
		for i := 26; i >= 0; i-- {
			out[i] = digits[new(big.Int).And(m, big.NewInt(31)).Int64()]
			m.Rsh(m, 5)
		}
		return "art_" + string(out[:])
	}
	for i := int64(1); i <= 64; i++ {
		guesses[encode(new(big.Int).Add(x, big.NewInt(i)))] = true
		guesses[encode(new(big.Int).Sub(y, big.NewInt(i)))] = true
	}
	if gap := new(big.Int).Sub(y, x); gap.Sign() > 0 && gap.Cmp(big.NewInt(256)) < 0 {
		for n := new(big.Int).Add(x, big.NewInt(1)); n.Cmp(y) < 0; n.Add(n, big.NewInt(1)) {
			guesses[encode(n)] = true
		}
	}
	if guesses[victim] {
		t.Errorf("the victim's ID %s is among the guesses from %s and %s", victim, first, second)
	}
	found := 0
	for g := range guesses {
		if code, _ := s.do("GET", "/v1/artifacts/"+g, ""); code != 404 {
			found++
		}
	}
	if found > 0 {
		t.Errorf("%d of %d guesses from %s and %s found an artifact", found, len(guesses), first, second)
	}

	// 40 IDs in a row: which of the 83 random bits ever change.
	changed := new(big.Int)
	prev := idBits(t, create("n"))
	for i := range 39 {
		n := idBits(t, create(fmt.Sprint(i)))
		changed.Or(changed, new(big.Int).Xor(n, prev))
		prev = n
	}
	random := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 83), big.NewInt(1))
	if got := new(big.Int).And(changed, random); got.Cmp(random) != 0 {
		t.Errorf("of the 83 bits after the time, those that changed between consecutive IDs: %083b, want all", got)
	}
}

// noteTool writes a line to notes.txt in the server's folder at every run:
// a side effect a journey can count. It runs without approval.
const noteTool = `name: note
description: Append a line to notes.txt
permission: auto
parameters:
  - name: message
    type: string
entry:
  type: command
  command: ["sh", "-c", "echo \"$0\" >> notes.txt", "{message}"]
`

// notes returns the lines of notes.txt.
func notes(u *user) []string {
	b, _ := os.ReadFile(u.path("notes.txt"))
	return strings.Fields(string(b))
}

// TestJourneyAttackCallIDReuse: a client reuses the ID of a recorded call
// so that its call runs with no record of its own (SQLite used to answer
// 200 and log the refused record; PostgreSQL ran the tool, then answered
// 500). The reuse is refused with 409 call_id_taken before the tool runs:
// over REST, in a batch (two calls of one ID, or one of a recorded ID),
// after a restart, and, on PostgreSQL, on another server. A chosen ID of
// the server's own shape is refused with 400.
func TestJourneyAttackCallIDReuse(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			u := newUser(t)
			u.write("tools/note.yaml", noteTool)
			args := []string{"--tools", "tools"}
			if store == "postgres" {
				args = append(args, "--db", postgresURL(t))
			}
			s := u.serve(args...)
			code, body := s.do("POST", "/v1/tools/note/call", `{"id":"job-1","arguments":{"message":"first"}}`)
			if code != 200 || !strings.Contains(string(body), `"ok":true`) {
				t.Fatalf("first call: %d %s", code, body)
			}
			refused := func(s *server, what, path, body string) {
				t.Helper()
				code, b := s.do("POST", path, body)
				if code != 409 || !strings.Contains(string(b), `"call_id_taken"`) {
					t.Errorf("%s: %d %s, want 409 call_id_taken", what, code, b)
				}
			}
			refused(s, "the same ID again", "/v1/tools/note/call", `{"id":"job-1","arguments":{"message":"second"}}`)
			refused(s, "the same ID, another tool", "/v1/tools/echo/call", `{"id":"job-1","arguments":{"message":"x"}}`)
			refused(s, "a batch with a recorded ID", "/v1/batch", `{"calls":[{"tool":"note","id":"job-2","arguments":{"message":"third"}},{"tool":"note","id":"job-1","arguments":{"message":"fourth"}}]}`)
			refused(s, "a batch of two calls of one ID", "/v1/batch", `{"calls":[{"tool":"note","id":"twin","arguments":{"message":"fifth"}},{"tool":"note","id":"twin","arguments":{"message":"sixth"}}]}`)
			code, body = s.do("POST", "/v1/tools/note/call", `{"id":"01kjvktdck0eq3mpz9tdh0c7fr0","arguments":{"message":"seventh"}}`)
			if code != 400 || !strings.Contains(string(body), "shape of the IDs the server makes") {
				t.Errorf("a chosen ID of the server's shape: %d %s, want 400", code, body)
			}
			if got := notes(u); len(got) != 1 || got[0] != "first" {
				t.Errorf("notes.txt: %q, want only the first call's line", got)
			}
			code, body = s.do("GET", "/v1/calls/job-1", "")
			if code != 200 || !strings.Contains(string(body), `"first"`) || strings.Contains(string(body), `"second"`) {
				t.Errorf("the record of job-1: %d %s, want the first call's", code, body)
			}

			// After a restart the ID is still taken.
			if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
				t.Fatalf("stop: exit %d after %v\n%s", code, took, s.stderr)
			}
			s = u.serve(args...)
			refused(s, "the same ID after a restart", "/v1/tools/note/call", `{"id":"job-1","arguments":{"message":"eighth"}}`)
			if store == "postgres" {
				other := u.serve(args...)
				refused(other, "the same ID on another server", "/v1/tools/note/call", `{"id":"job-1","arguments":{"message":"ninth"}}`)
				if code, body := other.do("POST", "/v1/tools/note/call", `{"id":"job-3","arguments":{"message":"tenth"}}`); code != 200 {
					t.Errorf("a new ID on the other server: %d %s", code, body)
				}
				refused(s, "the other server's ID here", "/v1/tools/note/call", `{"id":"job-3","arguments":{"message":"eleventh"}}`)
			}
			want := []string{"first"}
			if store == "postgres" {
				want = append(want, "tenth")
			}
			if got := notes(u); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("notes.txt: %q, want %q: a refused call ran", got, want)
			}
			if strings.Contains(s.stderr.String(), "refused") {
				t.Errorf("the server logged a refused record:\n%s", s.stderr)
			}
		})
	}
}
