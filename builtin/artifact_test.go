package builtin_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/memstore"
)

func TestArtifactTools(t *testing.T) {
	store := memstore.NewArtifacts()
	e := newEngine(t, builtin.ArtifactTools(store)...)
	res, err := e.Call(context.Background(), wield.Call{Tool: "create_artifact",
		Arguments: json.RawMessage(`{"title":"Plan","content":"# Plan\n\nStep one: buy flour.\nStep two: bake the bread at 220 degrees.\n"}`),
		Caller:    wield.ForConversation("writer", "conv-7")})
	if err != nil || !res.OK {
		t.Fatalf("create: %+v %v", res, err)
	}
	var made builtin.ArtifactOutput
	if err := json.Unmarshal(res.Output, &made); err != nil {
		t.Fatal(err)
	}
	if made.Version != 1 || made.Type != "markdown" || made.Content != "" || !strings.HasPrefix(made.ID, "art_") {
		t.Errorf("created %+v", made)
	}
	if a, _ := store.Artifact(context.Background(), "", made.ID, 1); a == nil || a.ConversationID != "conv-7" {
		t.Errorf("stored %+v, want it in conversation conv-7", a)
	}
	id := made.ID
	args := func(m map[string]any) string {
		m["id"] = id
		b, _ := json.Marshal(m)
		return string(b)
	}
	steps := []struct {
		tool    string
		args    string
		version int
		errType wield.ErrorType
		errText string
	}{
		{"update_artifact", args(map[string]any{"old": "Step one: buy flour.", "new": "Step one: buy flour and salt."}), 2, "", ""},
		// Misquoted a little: found by fuzzy match.
		{"update_artifact", args(map[string]any{"old": "Step two: bake the bread at 220 degres", "new": "Step two: bake at 230 degrees"}), 3, "", ""},
		{"update_artifact", args(map[string]any{"old": "Step", "new": "Stage"}), 0, wield.ErrValidation, "occurs 2 times"},
		{"update_artifact", args(map[string]any{"old": "Completely unrelated sentence about the weather in Oslo", "new": "x"}), 0, wield.ErrValidation, "cannot update"},
		{"update_artifact", `{"id":"art_missing","old":"a","new":"b"}`, 0, wield.ErrValidation, `no artifact with id "art_missing"`},
		{"update_artifact", args(map[string]any{"old": "", "new": "b"}), 0, wield.ErrValidation, ""},
		{"rewrite_artifact", args(map[string]any{"content": "all new"}), 4, "", ""},
		{"read_artifact", args(map[string]any{"version": 9}), 0, wield.ErrValidation, "has no version 9"},
	}
	for _, s := range steps {
		res := call(t, e, s.tool, s.args)
		if s.errType != "" {
			if res.OK || res.ErrorType != s.errType || !strings.Contains(res.Error, s.errText) {
				t.Errorf("%s %s: got ok=%v %s %q, want %s containing %q", s.tool, s.args, res.OK, res.ErrorType, res.Error, s.errType, s.errText)
			}
			continue
		}
		var out builtin.ArtifactOutput
		if !res.OK || json.Unmarshal(res.Output, &out) != nil || out.Version != s.version {
			t.Errorf("%s %s: got %s %s, want version %d", s.tool, s.args, res.Output, res.Error, s.version)
		}
	}
	want := map[int]string{
		1: "# Plan\n\nStep one: buy flour.\nStep two: bake the bread at 220 degrees.\n",
		2: "# Plan\n\nStep one: buy flour and salt.\nStep two: bake the bread at 220 degrees.\n",
		3: "# Plan\n\nStep one: buy flour and salt.\nStep two: bake at 230 degrees.\n",
		4: "all new",
		0: "all new",
	}
	for v, content := range want {
		res := call(t, e, "read_artifact", args(map[string]any{"version": v}))
		var out builtin.ArtifactOutput
		if err := json.Unmarshal(res.Output, &out); err != nil {
			t.Fatalf("read version %d: %s %s", v, res.Output, res.Error)
		}
		if diff := cmp.Diff(content, out.Content); diff != "" {
			t.Errorf("version %d (-want +got):\n%s", v, diff)
		}
	}
}

// brokenStore fails as a database that went away does.
type brokenStore struct{ wield.ArtifactStore }

func (brokenStore) Artifact(context.Context, string, string, int) (*wield.Artifact, error) {
	return nil, errors.New("dial tcp 10.1.2.3:5432: connect: connection refused")
}

func TestArtifactStoreFailureHidden(t *testing.T) {
	e := newEngine(t, builtin.ArtifactTools(brokenStore{memstore.NewArtifacts()})...)
	res := call(t, e, "read_artifact", `{"id":"art_1"}`)
	if res.OK || res.ErrorType != wield.ErrExecution || strings.Contains(res.Error, "10.1.2.3") {
		t.Errorf("got %s %q", res.ErrorType, res.Error)
	}
}

func TestCallSubagent(t *testing.T) {
	agents := []string{"researcher", "coder"}
	e := newEngine(t, builtin.CallSubagent(func() []string { return agents }))
	res := call(t, e, "call_subagent", `{"agent_name":"coder","instruction":"Fix the failing test in parse.go"}`)
	if diff := cmp.Diff(`{"route":true,"agent_name":"coder","instruction":"Fix the failing test in parse.go"}`, string(res.Output)); diff != "" || !res.OK {
		t.Errorf("route %s (-want +got):\n%s", res.Error, diff)
	}
	res = call(t, e, "call_subagent", `{"agent_name":"designer"}`)
	if res.OK || res.ErrorType != wield.ErrValidation || res.Error != `agent "designer" does not exist; choose one of: coder, researcher` {
		t.Errorf("unknown agent: %s %q", res.ErrorType, res.Error)
	}
	agents = nil
	if res := call(t, e, "call_subagent", `{"agent_name":"coder"}`); res.OK || !strings.Contains(res.Error, "no agents are configured") {
		t.Errorf("no agents: %s %q", res.ErrorType, res.Error)
	}
}

// TestArtifactToolsScoped is a model that holds key B's calls and knows the
// ID of key A's artifact (from a log, a shared chat, a guess): read, update
// and rewrite find nothing, as for an ID that does not exist, and A's
// artifact is unchanged. In one key, a call in another conversation finds
// nothing either, while calls without a conversation reach all the key's.
func TestArtifactToolsScoped(t *testing.T) {
	store := memstore.NewArtifacts()
	e := newEngine(t, builtin.ArtifactTools(store)...)
	as := func(key, conv, tool, args string) *wield.Result {
		t.Helper()
		ctx := context.Background()
		if key != "" {
			ctx = wield.WithRequester(ctx, "key:"+key)
		}
		res, err := e.Call(ctx, wield.Call{Tool: tool, Arguments: json.RawMessage(args), Caller: wield.ForConversation("agent", conv)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := as("a", "conv-a", "create_artifact", `{"content":"A's secret plan"}`)
	var made builtin.ArtifactOutput
	if !res.OK || json.Unmarshal(res.Output, &made) != nil {
		t.Fatalf("create as key a: %s %s", res.Output, res.Error)
	}
	notFound := `there is no artifact with id "` + made.ID + `"`
	for _, who := range []struct{ key, conv string }{{"b", "conv-a"}, {"b", ""}, {"", "conv-a"}, {"a", "conv-other"}} {
		for _, c := range []struct{ tool, args string }{
			{"read_artifact", `{"id":"` + made.ID + `"}`},
			{"read_artifact", `{"id":"` + made.ID + `","version":1}`},
			{"update_artifact", `{"id":"` + made.ID + `","old":"secret","new":"stolen"}`},
			{"rewrite_artifact", `{"id":"` + made.ID + `","content":"overwritten"}`},
		} {
			res := as(who.key, who.conv, c.tool, c.args)
			if res.OK || res.ErrorType != wield.ErrValidation || (!strings.Contains(res.Error, notFound) && !strings.Contains(res.Error, "or does not exist")) {
				t.Errorf("key %q in %q: %s %s: ok=%v %s %q, want not found", who.key, who.conv, c.tool, c.args, res.OK, res.ErrorType, res.Error)
			}
		}
	}
	for _, conv := range []string{"conv-a", ""} {
		res := as("a", conv, "read_artifact", `{"id":"`+made.ID+`"}`)
		var out builtin.ArtifactOutput
		if !res.OK || json.Unmarshal(res.Output, &out) != nil || out.Content != "A's secret plan" || out.Version != 1 {
			t.Errorf("key a in %q reads its own: %s %s, want version 1 unchanged", conv, res.Output, res.Error)
		}
	}
	if a, err := store.Artifact(context.Background(), "key:a", made.ID, 0); err != nil || a.Owner != "key:a" || a.ConversationID != "conv-a" {
		t.Errorf("stored %+v, %v; want owner key:a in conv-a", a, err)
	}
}
