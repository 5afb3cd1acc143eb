package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
)

// TestHiddenToolNeverSeenByTheStream: a tool the policies hide from a key
// (by its tags), added and removed where the key's stream did not decide
// on it while it was registered (a stream that asks for tool_removed only,
// a stream that resumes from before it was added), is not told to that key:
// its events name a tool that has gone, which the stream must decide on as
// it was, not by its name alone (which no policy on tags or toolsets hides).
func TestHiddenToolNeverSeenByTheStream(t *testing.T) {
	set := policySet(t, `@id("everyone") permit(principal, action, resource);
@id("two-no-math") forbid(principal == Key::"config-2", action, resource) when { resource.tags.contains("math") };`)
	bus := wield.NewBus(0)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	reg.MustRegister(builtin.Echo())
	hs := policyServer(t, reg, set)

	tool := func(name string, tags ...string) *wield.Tool {
		tl := wield.Func(name, "A tool of the test", func(context.Context, struct{}) (string, error) { return "ok", nil })
		tl.Tags = tags
		return tl
	}
	before := bus.Last()
	removals := map[string]*eventStream{
		"secret-one": openEventsAt(t, hs, "secret-one", "?type=tool_removed"),
		"secret-two": openEventsAt(t, hs, "secret-two", "?type=tool_removed"),
	}
	reg.MustRegister(tool("abacus", "math"), tool("mark"))
	if !reg.Remove("abacus") || !reg.Remove("mark") {
		t.Fatal("a tool not removed")
	}
	resumed := map[string]*eventStream{
		"secret-one": openEventsAt(t, hs, "secret-one", "?last_event_id="+before),
		"secret-two": openEventsAt(t, hs, "secret-two", "?last_event_id="+before),
	}
	for _, key := range []string{"secret-one", "secret-two"} {
		for how, st := range map[string]*eventStream{"removals only": removals[key], "resumed": resumed[key]} {
			got, _ := st.untilEvent(t, wield.EventToolRemoved, "mark")
			told := strings.Contains(strings.Join(got, ","), "abacus")
			if key == "secret-one" && !told {
				t.Errorf("%s, %s: nothing of abacus: %q", key, how, got)
			}
			if key == "secret-two" && told {
				t.Errorf("%s, %s: abacus is hidden from it, yet told: %q", key, how, got)
			}
		}
	}
}

// openEventsAt is openEvents with a query.
func openEventsAt(t *testing.T, hs *httptest.Server, key, query string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/events"+query, nil)
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
		t.Fatalf("GET /v1/events%s: %d", query, resp.StatusCode)
	}
	return readEvents(resp)
}

// TestRemovedHiddenToolFigures: the calls of a tool the policies hid from
// a key stay out of its statistics and call records once the tool is
// removed: a tool that was never registered has no successful call to
// show, so showing them would tell that a hidden tool was there.
func TestRemovedHiddenToolFigures(t *testing.T) {
	set := policySet(t, `@id("everyone") permit(principal, action, resource);
@id("two-no-math") forbid(principal == Key::"config-2", action, resource) when { resource.tags.contains("math") };`)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	abacus := wield.Func("abacus", "Counts", func(context.Context, struct{}) (string, error) { return "ok", nil })
	abacus.Tags = []string{"math"}
	reg.MustRegister(builtin.Echo(), abacus)
	hs := policyServer(t, reg, set)

	for tool, args := range map[string]string{"abacus": `{}`, "echo": `{"message":"hi"}`} {
		if code, b := do(t, hs, "POST", "/v1/tools/"+tool+"/call", "secret-one", `{"arguments":`+args+`,"caller":{"id":"agent-1","conversation_id":"c1"}}`); code != 200 {
			t.Fatalf("key one calls %s: %d %s", tool, code, b)
		}
	}
	eventually(t, func() bool {
		_, b := do(t, hs, "GET", "/v1/statistics", "secret-one", "")
		return strings.Contains(string(b), `"abacus"`) && strings.Contains(string(b), `"echo"`)
	})
	if !reg.Remove("abacus") {
		t.Fatal("abacus not removed")
	}
	for _, path := range []string{"/v1/statistics", "/v1/calls", "/v1/conversations/c1/summary", "/v1/callers/agent-1/summary"} {
		code, b := do(t, hs, "GET", path, "secret-two", "")
		if code != 200 || !strings.Contains(string(b), "echo") {
			t.Fatalf("key two: GET %s: %d %s", path, code, b)
		}
		if strings.Contains(string(b), "abacus") {
			t.Errorf("key two: GET %s tells of the removed abacus, hidden from it: %s", path, b)
		}
		if code, b = do(t, hs, "GET", path, "secret-one", ""); code != 200 || !strings.Contains(string(b), "abacus") {
			t.Errorf("key one: GET %s: %d %s", path, code, b)
		}
	}
}
