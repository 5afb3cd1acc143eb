//go:build unix

package journeys

// What the Cedar policies hide from a key stays hidden on /v1/events and in
// /v1/statistics, through `wield serve`: bob, whom a policy forbids
// calculator, watches the event stream while alice calls calculator and
// hears nothing of it; his statistics have no calculator entry; alice sees
// both. When the policy is edited away (watched reload) his open stream
// tells him of her next call.

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// journeyEvents is an open /v1/events stream: its events' data lines.
type journeyEvents chan string

// openJourneyEvents opens /v1/events as key until ctx ends.
func openJourneyEvents(ctx context.Context, t *testing.T, s *server, key string) journeyEvents {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /v1/events: %v %v", err, resp)
	}
	ev := make(journeyEvents, 256)
	go func() {
		defer resp.Body.Close()
		defer close(ev)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ev <- data
			}
		}
	}()
	return ev
}

// until returns the events ("type tool") up to and including the first
// execution_completed of tool, waiting at most 20 s.
func (ev journeyEvents) until(t *testing.T, tool string) []string {
	t.Helper()
	timeout := time.After(20 * time.Second)
	var got []string
	for {
		select {
		case data, ok := <-ev:
			if !ok {
				t.Fatalf("the stream ended before %s completed; read %q", tool, got)
			}
			var e struct{ Type, Tool string }
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("event %s: %v", data, err)
			}
			got = append(got, e.Type+" "+e.Tool)
			if e.Type == "execution_completed" && e.Tool == tool {
				return got
			}
		case <-timeout:
			t.Fatalf("no execution_completed of %s within 20 s; read %q", tool, got)
		}
	}
}

// TestJourneyPolicyEvents: bob's events and statistics leave out the tool
// the policies hide from him; alice's do not.
func TestJourneyPolicyEvents(t *testing.T) {
	u := newUser(t)
	alice, _ := makeKey(t, u, "--name", "alice", "--rights", "call")
	bob, bobID := makeKey(t, u, "--name", "bob", "--rights", "call")
	u.write("configs/tools/note.yaml", "name: note\ndescription: Say a note\nparameters:\n  - {name: message, type: string, required: true}\nentry: {type: builtin, handler: echo}\n")
	u.write("configs/policies.cedar", `@id("everyone")
permit(principal, action, resource);

@id("bob-no-calculator")
forbid(principal == Key::"`+bobID+`", action, resource == Tool::"calculator");
`)
	u.write("wield.yaml", "reload: {watch: true}\n")
	s := u.serve("--config", "wield.yaml", "--tools", "configs")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	aliceEv, bobEv := openJourneyEvents(ctx, t, s, alice), openJourneyEvents(ctx, t, s, bob)
	call := func(key, tool, args string) {
		t.Helper()
		code, b := s.do("POST", "/v1/tools/"+tool+"/call", `{"arguments":`+args+`}`, bearer(key))
		if code != 200 || !strings.Contains(string(b), `"ok":true`) {
			t.Fatalf("%s: %d %s", tool, code, b)
		}
	}
	// alice calls calculator, then note: a mark that both streams carry.
	call(alice, "calculator", `{"expression":"6*7"}`)
	call(alice, "note", `{"message":"done"}`)
	want := []string{"execution_started calculator", "execution_completed calculator", "execution_started note", "execution_completed note"}
	if got := aliceEv.until(t, "note"); !slices.Equal(got, want) {
		t.Errorf("alice's events: %q; want %q", got, want)
	}
	if got := bobEv.until(t, "note"); !slices.Equal(got, want[2:]) {
		t.Errorf("bob's events: %q; want %q (nothing of calculator)", got, want[2:])
	}

	// The statistics: alice's count calculator, bob's have no entry of it.
	var st struct {
		Overall struct{ Count int }
		Tools   map[string]json.RawMessage
	}
	if !eventually(10*time.Second, func() bool {
		_, b := s.do("GET", "/v1/statistics", "", bearer(alice))
		return json.Unmarshal(b, &st) == nil && st.Overall.Count == 2
	}) || st.Tools["calculator"] == nil {
		t.Fatalf("alice's statistics: %+v; want 2 calls, calculator among them", st)
	}
	code, b := s.do("GET", "/v1/statistics", "", bearer(bob))
	st.Tools = nil
	if code != 200 || json.Unmarshal(b, &st) != nil || st.Overall.Count != 1 || st.Tools["calculator"] != nil || st.Tools["note"] == nil {
		t.Errorf("bob's statistics: %d %s; want note's call only, no calculator entry", code, b)
	}

	// The forbid edited away: bob's open stream tells him of alice's next
	// call of calculator.
	u.write("configs/policies.cedar", "@id(\"everyone\") permit(principal, action, resource);\n")
	if !eventually(10*time.Second, func() bool { return slices.Contains(listNames(t, s, bob), "calculator") }) {
		t.Fatalf("after the reload bob still lacks calculator:\n%s", s.stderr)
	}
	call(alice, "calculator", `{"expression":"1+1"}`)
	call(alice, "note", `{"message":"done"}`)
	want = []string{"execution_started calculator", "execution_completed calculator", "execution_started note", "execution_completed note"}
	got := bobEv.until(t, "note")
	if got = slices.DeleteFunc(got, func(e string) bool { return strings.HasPrefix(e, "reload_") }); !slices.Equal(got, want) {
		t.Errorf("bob's events after the reload: %q; want %q", got, want)
	}
	cancel()
	if code, took := s.stop(syscall.SIGTERM, 20*time.Second); code != 0 {
		t.Fatalf("serve exit %d after %v:\n%s", code, took, s.stderr)
	}
}
