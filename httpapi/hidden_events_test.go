package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/agent"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/policy"
	"github.com/wieldhq/wield/sqlite"
)

// eventStream is an open /v1/events stream, read line by line on a
// goroutine of its own.
type eventStream struct {
	lines chan string
}

// openEvents opens /v1/events with key and returns once the stream is
// open; it ends with the test.
func openEvents(t *testing.T, hs *httptest.Server, key string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET /v1/events: %d", resp.StatusCode)
	}
	return readEvents(resp)
}

// readEvents reads the data of an open stream's events on a goroutine of
// its own.
func readEvents(resp *http.Response) *eventStream {
	s := &eventStream{lines: make(chan string, 1024)}
	go func() {
		defer resp.Body.Close()
		defer close(s.lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: ") {
				s.lines <- strings.TrimPrefix(l, "data: ")
			}
		}
	}()
	return s
}

// until returns the events of the stream up to and including the first
// execution_completed of tool want, as "type tool" (bounded by ten
// seconds), and the data of each.
func (s *eventStream) until(t *testing.T, want string) (names []string, data []string) {
	t.Helper()
	return s.untilEvent(t, wield.EventExecutionCompleted, want)
}

// untilEvent returns the events of the stream up to and including the
// first event of type typ naming tool want, as "type tool" (bounded by ten
// seconds), and the data of each.
func (s *eventStream) untilEvent(t *testing.T, typ wield.EventType, want string) (names []string, data []string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("stream ended before a %s event of %s; read %q", typ, want, names)
			}
			var e wield.Event
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("event %s: %v", l, err)
			}
			names = append(names, string(e.Type)+" "+e.Tool)
			data = append(data, l)
			if e.Type == typ && e.Tool == want {
				return names, data
			}
		case <-timeout:
			t.Fatalf("no %s event of %s within 10s; read %q", typ, want, names)
		}
	}
}

// TestHiddenToolEventsAndFigures: a key the policies hide calculator from
// (by its tags: decided on the tool's attributes) gets no event naming it
// on /v1/events (others' calls, its removal), and its statistics,
// conversation and caller summaries count no call of it; the traces of
// its own calls of calculator read as those of a tool that does not exist,
// in both. A policy reload changes what an open stream shows from the
// next event on. The other key sees everything.
func TestHiddenToolEventsAndFigures(t *testing.T) {
	hideMath := `@id("everyone") permit(principal, action, resource);
@id("two-no-math") forbid(principal == Key::"config-2", action, resource) when { resource.tags.contains("math") };`
	set := policySet(t, hideMath)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	mark := wield.Func("mark", "Marks a point in the event stream", func(context.Context, struct{}) (string, error) { return "here", nil })
	reg.MustRegister(builtin.Echo(), builtin.Calculator(), mark)
	if _, err := reg.CreateToolkit("helper", "echo"); err != nil {
		t.Fatal(err)
	}
	hs := policyServer(t, reg, set)

	one, two := openEvents(t, hs, "secret-one"), openEvents(t, hs, "secret-two")
	call := func(key, tool, args string) {
		t.Helper()
		code, b := do(t, hs, "POST", "/v1/tools/"+tool+"/call", key, `{"arguments":`+args+`,"caller":{"id":"agent-1","conversation_id":"c1"}}`)
		if code != 200 {
			t.Fatalf("%s calls %s: %d %s", key, tool, code, b)
		}
	}
	call("secret-one", "calculator", `{"expression":"6*7"}`)
	call("secret-one", "calculator", `{"expression":"1+1"}`)
	call("secret-one", "echo", `{"message":"hi"}`)
	call("secret-two", "calculator", `{"expression":"6*7"}`)
	call("secret-two", "no_such_tool", `{"expression":"6*7"}`)
	// As an agent whose toolkit has neither: no tool is looked for.
	for _, tool := range []string{"calculator", "no_such_tool"} {
		if code, b := do(t, hs, "POST", "/v1/tools/"+tool+"/call", "secret-two", `{"arguments":{"expression":"6*7"},"agent":"helper","caller":{"id":"helper","conversation_id":"c2"}}`); code != 200 {
			t.Fatalf("key two calls %s as helper: %d %s", tool, code, b)
		}
	}
	call("secret-one", "mark", `{}`)

	got, _ := one.until(t, "mark")
	want := []string{"execution_started calculator", "execution_completed calculator", "execution_started calculator", "execution_completed calculator",
		"execution_started echo", "execution_completed echo", "execution_failed calculator", "execution_failed no_such_tool",
		"execution_failed calculator", "execution_failed no_such_tool", "execution_started mark", "execution_completed mark"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("key one's events (-want +got)\n%s", diff)
	}
	got, data := two.until(t, "mark")
	want = []string{"execution_started echo", "execution_completed echo", "execution_failed calculator", "execution_failed no_such_tool",
		"execution_failed calculator", "execution_failed no_such_tool", "execution_started mark", "execution_completed mark"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("key two's events: calculator is hidden from it (-want +got)\n%s", diff)
	}
	if len(data) == len(want) {
		// A duration under half a microsecond is 0 ms, which an event
		// leaves out: whether duration_ms is there is the clock's noise
		// (a failed look-up takes about that long), not the tool's.
		varying := regexp.MustCompile(`"(id|call_id|time)":("[^"]*"|[0-9.e-]+)`)
		duration := regexp.MustCompile(`,"duration_ms":[0-9.e-]+`)
		same := func(tool, l string) string {
			return varying.ReplaceAllString(duration.ReplaceAllString(strings.ReplaceAll(l, tool, "TOOL"), ""), `"$1":_`)
		}
		for i := 2; i < 6; i += 2 {
			if a, b := same("calculator", data[i]), same("no_such_tool", data[i+1]); a != b {
				t.Errorf("key two's own call of calculator and of an unknown tool: events differ\n%s\n%s", a, b)
			}
		}
	}

	// The figures: key one's count every call; key two's none of key
	// one's calls of calculator, and its own as an unknown tool's.
	type figures struct {
		Overall    struct{ Count, Failures int }
		Tools      map[string]struct{ Count, Failures int }
		Categories map[string]struct{ Count int }
	}
	var st figures
	eventually(t, func() bool {
		_, b := do(t, hs, "GET", "/v1/statistics", "secret-one", "")
		return json.Unmarshal(b, &st) == nil && st.Overall.Count == 8
	})
	if st.Tools["calculator"].Count != 4 || st.Categories[string(wield.CategoryData)].Count != 2 {
		t.Errorf("key one's statistics: %+v", st)
	}
	st = figures{}
	code, b := do(t, hs, "GET", "/v1/statistics", "secret-two", "")
	if code != 200 || json.Unmarshal(b, &st) != nil {
		t.Fatalf("key two's statistics: %d %s", code, b)
	}
	if st.Overall.Count != 6 || st.Tools["calculator"] != st.Tools["no_such_tool"] || st.Tools["calculator"].Failures != 2 ||
		st.Categories[string(wield.CategoryData)].Count != 0 || strings.Contains(string(b), `"data"`) {
		t.Errorf("key two's statistics count key one's calls of calculator, or tell its own from an unknown tool's: %s", b)
	}

	var conv wield.Summary
	code, b = do(t, hs, "GET", "/v1/conversations/c1/summary", "secret-two", "")
	if code != 200 || json.Unmarshal(b, &conv) != nil {
		t.Fatalf("key two's summary: %d %s", code, b)
	}
	wantSum := wield.Summary{ConversationID: "c1", TotalCalls: 4, SuccessfulCalls: 2, FailedCalls: 2, SuccessRate: 50, HasErrors: true,
		ToolUsage: map[string]int{"echo": 1, "calculator": 1, "no_such_tool": 1, "mark": 1}}
	if diff := cmp.Diff(wantSum, conv); diff != "" {
		t.Errorf("key two's summary of c1 (-want +got)\n%s", diff)
	}
	if code, b = do(t, hs, "GET", "/v1/conversations/c1/summary", "secret-one", ""); code != 200 || json.Unmarshal(b, &conv) != nil || conv.TotalCalls != 6 {
		t.Errorf("key one's summary of c1: %d %s", code, b)
	}
	var caller agent.ExecutionSummary
	code, b = do(t, hs, "GET", "/v1/callers/agent-1/summary", "secret-two", "")
	if code != 200 || json.Unmarshal(b, &caller) != nil {
		t.Fatalf("key two's caller summary: %d %s", code, b)
	}
	if caller.TotalCalls != 4 || caller.ToolUsage["calculator"] != 1 || caller.SuccessfulCalls != 2 {
		t.Errorf("key two's caller summary shows key one's calls of calculator: %s", b)
	}

	// A reload hides echo instead, from the next event on, on the
	// stream already open.
	writePolicies(t, set, `@id("everyone") permit(principal, action, resource);
@id("two-no-echo") forbid(principal == Key::"config-2", action, resource == Tool::"echo");`)
	call("secret-one", "calculator", `{"expression":"2+2"}`)
	call("secret-one", "echo", `{"message":"hi"}`)
	call("secret-one", "mark", `{}`)
	one.until(t, "mark")
	got, _ = two.until(t, "mark")
	want = []string{"execution_started calculator", "execution_completed calculator", "execution_started mark", "execution_completed mark"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("key two's events after the reload (-want +got)\n%s", diff)
	}

	// Its removal is not told to a key calculator is hidden from, though
	// the tool is no longer there to decide on: the stream decides as it
	// last saw it.
	writePolicies(t, set, hideMath)
	if !reg.Remove("calculator") {
		t.Fatal("calculator not removed")
	}
	call("secret-one", "mark", `{}`)
	got, _ = one.until(t, "mark")
	if !slices.Contains(got, "tool_removed calculator") {
		t.Errorf("key one's events: no removal of calculator: %q", got)
	}
	got, _ = two.until(t, "mark")
	if want := []string{"execution_started mark", "execution_completed mark"}; !cmp.Equal(want, got) {
		t.Errorf("key two's events after calculator's removal: %q; want %q", got, want)
	}
}

// writePolicies replaces the policies of set with src and reloads it.
func writePolicies(t *testing.T, set *policy.Set, src string) {
	t.Helper()
	if err := os.WriteFile(set.Files()[0], []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := set.Reload(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkEventShown is the cost a stream's filter adds to an event
// naming a tool, with policies: cached (package policy's Set has a
// generation) and decided every time (a policy without one).
func BenchmarkEventShown(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(`@id("everyone") permit(principal, action, resource);
@id("two-no-math") forbid(principal == Key::"config-2", action, resource) when { resource.tags.contains("math") };`), 0o644); err != nil {
		b.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		b.Fatal(err)
	}
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo(), builtin.Calculator())
	if err := reg.DefineToolset(wield.Toolset{Name: "math", Tools: []string{"calculator"}}); err != nil {
		b.Fatal(err)
	}
	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "w.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close(context.Background())
	for _, tt := range []struct {
		name string
		p    wield.Policy
	}{{"cached", set}, {"uncached", struct{ wield.Policy }{set}}} {
		b.Run(tt.name, func(b *testing.B) {
			eng := engine.New(reg, &engine.Options{Policy: tt.p})
			defer eng.Close(context.Background())
			s, err := New(Options{Engine: eng, Store: store})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			r := httptest.NewRequest("GET", "/v1/events", nil)
			r = r.WithContext(wield.WithRequester(r.Context(), "key:config-2"))
			shown := s.eventShown(r)
			events := []wield.Event{{Type: wield.EventExecutionCompleted, Tool: "echo"}, {Type: wield.EventExecutionCompleted, Tool: "calculator"}}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if shown(&events[i%2]) != (i%2 == 0) {
					b.Fatal("wrong decision")
				}
			}
		})
	}
}
