package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
	"github.com/wieldhq/wield/policy"
)

// policyEngine is an engine of echo whose policies let Key::"a" call it
// unless the message is "secret".
func policyEngine(t *testing.T, mode policy.Mode) (*engine.Engine, *memstore.Store) {
	t.Helper()
	return policyEngineBus(t, mode, nil)
}

// policyEngineBus is policyEngine publishing its events on bus.
func policyEngineBus(t *testing.T, mode policy.Mode, bus *wield.Bus) (*engine.Engine, *memstore.Store) {
	t.Helper()
	dir := t.TempDir()
	src := `@id("a-echoes") permit(principal == Key::"a", action, resource == Tool::"echo");
@id("no-secrets") forbid(principal, action, resource) when { context has args && context.args has message && context.args.message == "secret" };`
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := policy.Load(mode, dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(echoTool())
	store := memstore.New(0)
	return engine.New(reg, &engine.Options{Policy: set, Store: store, Logger: quiet, Bus: bus}), store
}

func TestPolicyStep(t *testing.T) {
	tests := []struct {
		name, key, msg string
		mode           policy.Mode
		wantOK         bool
		wantErr        string
		wantType       wield.ErrorType
		want           any // the record's decision
	}{
		{"permitted", "a", "hi", policy.Enforce, true, "", "", wield.PolicyDecision{Allow: true, Policies: []string{"a-echoes"}}},
		// Denied even without arguments, so hidden from b: not found, as
		// a tool that does not exist, and no policy named.
		{"default deny hides", "b", "hi", policy.Enforce, false, "Can not find tool named 'echo'", wield.ErrToolNotFound, nil},
		{"forbid wins", "a", "secret", policy.Enforce, false, "Permission denied: tool 'echo' is forbidden by policy no-secrets", wield.ErrPermissionDenied, wield.PolicyDecision{Policies: []string{"no-secrets"}}},
		{"monitor runs it", "a", "secret", policy.Monitor, true, "", "", wield.PolicyDecision{Allow: true, Monitor: true, Policies: []string{"no-secrets"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, store := policyEngine(t, tt.mode)
			ctx := wield.WithRequester(context.Background(), "key:"+tt.key)
			res, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"` + tt.msg + `"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != tt.wantOK || res.Error != tt.wantErr {
				t.Errorf("result ok=%v %q, want ok=%v %q", res.OK, res.Error, tt.wantOK, tt.wantErr)
			}
			if res.ErrorType != tt.wantType {
				t.Errorf("error type %q, want %q", res.ErrorType, tt.wantType)
			}
			recs := store.Records(memstore.Filter{})
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			if diff := cmp.Diff(tt.want, recs[0].Result.Metadata["policy"]); diff != "" {
				t.Errorf("the record's decision (-want +got)\n%s", diff)
			}
		})
	}
}

// TestPolicyKeepsPermissions: a policy's allow does not lift a tool's
// own deny.
func TestPolicyKeepsPermissions(t *testing.T) {
	e, _ := policyEngine(t, policy.Enforce)
	denied := echoTool()
	denied.Permission = wield.PermissionDeny
	if err := e.Registry().Update(denied); err != nil {
		t.Fatal(err)
	}
	res, err := e.Call(wield.WithRequester(context.Background(), "key:a"), wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.ErrorType != wield.ErrPermissionDenied {
		t.Errorf("%+v, want permission_denied", res)
	}
}

func TestVisibleTools(t *testing.T) {
	e, _ := policyEngine(t, policy.Enforce)
	list := func(key string) []string {
		ctx := wield.WithRequester(context.Background(), "key:"+key)
		var names []string
		for _, tl := range wield.VisibleTools(ctx, e.Policy(), e.Registry(), wield.Caller{}, e.Registry().List(wield.Query{})) {
			names = append(names, tl.Name)
		}
		return names
	}
	if diff := cmp.Diff([]string{"echo"}, list("a")); diff != "" {
		t.Errorf("key a (-want +got)\n%s", diff)
	}
	if got := list("b"); len(got) != 0 {
		t.Errorf("key b sees %v, want nothing", got)
	}
}

// TestPolicyDryRun: a dry run answers as the call would, with the
// decision, and records nothing.
func TestPolicyDryRun(t *testing.T) {
	e, store := policyEngine(t, policy.Enforce)
	ctx := wield.WithRequester(context.Background(), "key:a")
	c := wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"secret"}`)}
	d, err := e.DryRun(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Call(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d.WouldRun || d.Stage != wield.StagePermission || d.ErrorType != res.ErrorType || d.Error != res.Error {
		t.Errorf("dry run %+v, the call %q %q", d, res.ErrorType, res.Error)
	}
	if d.Policy == nil || !cmp.Equal(d.Policy.Policies, []string{"no-secrets"}) {
		t.Errorf("dry run's policy decision %+v, want no-secrets", d.Policy)
	}
	if n := len(store.Records(memstore.Filter{})); n != 1 {
		t.Errorf("%d records, want the call's only", n)
	}
}

// BenchmarkPolicy compares an echo call without policies with one decided
// by a Cedar set of two policies, in the same run.
func BenchmarkPolicy(b *testing.B) {
	dir := b.TempDir()
	src := `@id("a-echoes") permit(principal == Key::"a", action, resource == Tool::"echo");
@id("no-secrets") forbid(principal, action, resource) when { context has args && context.args has message && context.args.message == "secret" };`
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	set, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    wield.Policy
	}{{"none", nil}, {"cedar", set}} {
		b.Run(c.name, func(b *testing.B) {
			reg := wield.NewRegistry(nil)
			reg.MustRegister(echoTool())
			e := engine.New(reg, &engine.Options{Policy: c.p, Logger: quiet})
			ctx := wield.WithRequester(context.Background(), "key:a")
			call := wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := e.Call(ctx, call); err != nil || !res.OK {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// TestPolicyBeforeReplay: an idempotency key does not hand a caller the
// policies refuse the answer of another caller's call (nor tell it the
// tool exists: the policies hide it from b).
func TestPolicyBeforeReplay(t *testing.T) {
	e, _ := policyEngine(t, policy.Enforce)
	c := wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"message":"hi"}`), IdempotencyKey: "k1"}
	res, err := e.Call(wield.WithRequester(context.Background(), "key:a"), c)
	if err != nil || !res.OK {
		t.Fatalf("key a: %v %+v", err, res)
	}
	ctx := wield.WithRequester(context.Background(), "key:b")
	res, err = e.Call(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.ErrorType != wield.ErrToolNotFound || res.Metadata["replayed"] != nil {
		t.Errorf("key b with a's idempotency key: %+v; want tool_not_found, no replay", res)
	}
	d, err := e.DryRun(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d.Stage != wield.StageLookup || d.Replay != "" {
		t.Errorf("key b's dry run: stage %s, replay %q; want lookup", d.Stage, d.Replay)
	}
	res, err = e.Call(wield.WithRequester(context.Background(), "key:a"), c)
	if err != nil || res.Metadata["replayed"] != true || res.Metadata["policy"] == nil {
		t.Errorf("key a's replay: %v %+v; want replayed with its policy decision", err, res.Metadata)
	}
}

// TestHiddenToolAnswersAsUnknown: a caller the policies hide a tool from
// (key b, echo) gets, for a call of it, the answer a tool that does not
// exist gets: nothing from validation (arguments missing or unknown), no
// policy named, and the same in a dry run.
func TestHiddenToolAnswersAsUnknown(t *testing.T) {
	e, _ := policyEngine(t, policy.Enforce)
	ctx := wield.WithRequester(context.Background(), "key:b")
	type answer struct {
		Error      string
		Type       wield.ErrorType
		Validation []wield.ValidationError
		Metadata   map[string]any
		Stage      wield.DryRunStage
		DryError   string
	}
	ask := func(tool, args string) answer {
		c := wield.Call{Tool: tool, Arguments: json.RawMessage(args)}
		res, err := e.Call(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		d, err := e.DryRun(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		a := answer{Type: res.ErrorType, Validation: res.ValidationErrors, Metadata: res.Metadata, Stage: d.Stage, DryError: d.Error}
		a.Error = strings.ReplaceAll(res.Error, tool, "TOOL")
		a.DryError = strings.ReplaceAll(a.DryError, tool, "TOOL")
		return a
	}
	for _, args := range []string{`{"message":"hi"}`, `{}`, `{"nope":1}`, `[1]`} {
		if diff := cmp.Diff(ask("no_such_tool", args), ask("echo", args)); diff != "" {
			t.Errorf("args %s: unknown tool's answer (-) and hidden echo's (+) differ:\n%s", args, diff)
		}
	}
	// Nor is its status told: a disabled tool hidden from b is not found.
	disabled := echoTool()
	disabled.Status = wield.StatusDisabled
	if err := e.Registry().Update(disabled); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ask("no_such_tool", `{"message":"hi"}`), ask("echo", `{"message":"hi"}`)); diff != "" {
		t.Errorf("a disabled echo: unknown tool's answer (-) and hidden echo's (+) differ:\n%s", diff)
	}
}

// TestHiddenToolNoValidationEvent: invalid arguments for a tool hidden from
// the caller publish no validation event (it would name the tool and quote
// its schema's rules on the event stream), as for a tool that does not
// exist; for a caller who may see the tool they do.
func TestHiddenToolNoValidationEvent(t *testing.T) {
	e, _ := policyEngineBus(t, policy.Enforce, wield.NewBus(0))
	sub := e.Bus().Subscribe(func(ev *wield.Event) bool { return ev.Type == wield.EventValidationError })
	defer sub.Close()
	for _, key := range []string{"key:b", "key:a"} {
		ctx := wield.WithRequester(context.Background(), key)
		if _, err := e.Call(ctx, wield.Call{Tool: "echo", Arguments: json.RawMessage(`{"nope":1}`), Caller: wield.Caller{ID: key}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ev, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ev.CallerID != "key:a" {
		t.Errorf("first validation event is %q's, want only key:a's (b may not see echo)", ev.CallerID)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if ev, err := sub.Next(short); err == nil {
		t.Errorf("a second validation event, %q's: want none", ev.CallerID)
	}
}
