package policy_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cedar-policy/cedar-go"
	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/policy"
)

// rules are the policies most tests decide with.
const rules = `
@id("everyone-reads")
permit(principal, action == Action::"call", resource) when { resource.read_only };

@id("ops-all")
permit(principal == Key::"ops", action, resource);

@id("no-shell")
forbid(principal, action, resource) when { resource.tags.contains("shell") };

@id("files-for-alice")
permit(principal == User::"alice", action, resource in Toolset::"files");

@id("no-etc")
forbid(principal, action, resource) when { context.args.path like "/etc/*" };

@id("small-batches")
forbid(principal == Key::"ops", action, resource == Tool::"batch") when { context.args.count > 100 };
`

func write(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, mode policy.Mode, src string) *policy.Set {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "rules.cedar", src)
	s, err := policy.Load(mode, dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	reader  = &wield.Tool{Name: "read_file", Annotations: wield.Annotations{ReadOnly: true}}
	writer  = &wield.Tool{Name: "write_file", Annotations: wield.Annotations{Destructive: true}}
	shell   = &wield.Tool{Name: "run", Tags: []string{"shell"}, Annotations: wield.Annotations{ReadOnly: true}}
	batcher = &wield.Tool{Name: "batch"}
)

func TestDecide(t *testing.T) {
	s := load(t, policy.Enforce, rules)
	tests := []struct {
		name string
		req  wield.PolicyRequest
		want wield.PolicyDecision
	}{
		{"a permit allows", wield.PolicyRequest{Tool: reader, Arguments: json.RawMessage(`{"path":"a.txt"}`)},
			wield.PolicyDecision{Allow: true, Policies: []string{"everyone-reads"}}},
		{"no permit denies (default deny)", wield.PolicyRequest{Tool: writer, Requester: "key:dev", Arguments: json.RawMessage(`{}`)},
			wield.PolicyDecision{}},
		{"a key's permit", wield.PolicyRequest{Tool: writer, Requester: "key:ops", Arguments: json.RawMessage(`{}`)},
			wield.PolicyDecision{Allow: true, Policies: []string{"ops-all"}}},
		{"forbid wins over permits", wield.PolicyRequest{Tool: shell, Requester: "key:ops", Arguments: json.RawMessage(`{}`)},
			wield.PolicyDecision{Policies: []string{"no-shell"}}},
		{"the arguments decide", wield.PolicyRequest{Tool: reader, Arguments: json.RawMessage(`{"path":"/etc/passwd"}`)},
			wield.PolicyDecision{Policies: []string{"no-etc"}}},
		{"a toolset is a parent", wield.PolicyRequest{Tool: writer, Toolsets: []string{"files"}, Caller: wield.Caller{UserID: "alice"}, Arguments: json.RawMessage(`{}`)},
			wield.PolicyDecision{Allow: true, Policies: []string{"files-for-alice"}}},
		{"the key is the principal before the user", wield.PolicyRequest{Tool: writer, Toolsets: []string{"files"}, Requester: "key:dev", Caller: wield.Caller{UserID: "alice"}, Arguments: json.RawMessage(`{}`)},
			wield.PolicyDecision{}},
		{"integers compare", wield.PolicyRequest{Tool: batcher, Requester: "key:ops", Arguments: json.RawMessage(`{"count":101}`)},
			wield.PolicyDecision{Policies: []string{"small-batches"}}},
		{"a list asks without arguments: policies reading them are skipped", wield.PolicyRequest{Tool: batcher, Requester: "key:ops"},
			wield.PolicyDecision{Allow: true, Policies: []string{"ops-all"}, Errors: []string{
				"no-etc: record does not contain the attribute \"args\"", "small-batches: record does not contain the attribute \"args\""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Decide(context.Background(), tt.req)
			if tt.want.Errors == nil {
				got.Errors = nil // policies reading an argument the call lacks: see the list case
			}
			// The texts of evaluation errors are cedar-go's: compare the IDs.
			for i, e := range got.Errors {
				got.Errors[i] = e[:strings.Index(e, ":")]
			}
			for i, e := range tt.want.Errors {
				tt.want.Errors[i] = e[:strings.Index(e, ":")]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestMonitorAllowsAndSaysWouldDeny(t *testing.T) {
	s := load(t, policy.Monitor, rules)
	got := s.Decide(context.Background(), wield.PolicyRequest{Tool: shell, Arguments: json.RawMessage(`{}`)})
	got.Errors = nil
	want := wield.PolicyDecision{Allow: true, Monitor: true, Policies: []string{"no-shell"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestNoFilesAllowsEverything(t *testing.T) {
	s, err := policy.Load(policy.Enforce, t.TempDir(), filepath.Join(t.TempDir(), "absent"))
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Decide(context.Background(), wield.PolicyRequest{Tool: writer}); !d.Allow {
		t.Errorf("no policy files: %+v, want allow", d)
	}
}

func TestPolicyIDs(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "a.cedar", "permit(principal, action, resource);\n\n@id(\"x\")\nforbid(principal, action, resource) when { resource.destructive };\n")
	s, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Decide(context.Background(), wield.PolicyRequest{Tool: reader})
	if diff := cmp.Diff([]string{"a.cedar:1"}, d.Policies); diff != "" {
		t.Errorf("an unnamed policy's ID is FILE:LINE, FILE below the folder (-want +got)\n%s", diff)
	}
	write(t, dir, "b.cedar", "@id(\"x\")\npermit(principal, action, resource);\n")
	_, err = policy.Load(policy.Enforce, dir)
	if err == nil || !strings.Contains(err.Error(), `b.cedar:1:1: policy ID "x" is also the ID of the policy at `+f+":3") {
		t.Errorf("a repeated @id: %v", err)
	}
}

func TestBrokenFileKeepsTheLastGoodSet(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "rules.cedar", rules)
	s, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "rules.cedar", "permit(principal, action, resource);\nforbid(principal action, resource);\n")
	err = s.Reload()
	if err == nil || !strings.HasPrefix(err.Error(), f+":2:24: ") {
		t.Fatalf("Reload of a broken file: %v, want %s:2:24: ...", err, f)
	}
	if d := s.Decide(context.Background(), wield.PolicyRequest{Tool: shell, Arguments: json.RawMessage(`{}`)}); d.Allow {
		t.Errorf("after a failed reload the last good set decides: %+v, want no-shell's deny", d)
	}
	n, probs, err := policy.Check(dir)
	if err != nil || n != 1 || len(probs) != 1 || probs[0].Line != 2 {
		t.Errorf("Check: %d files, %v, %v", n, probs, err)
	}
	write(t, dir, "rules.cedar", "permit(principal, action, resource);\n")
	if err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if d := s.Decide(context.Background(), wield.PolicyRequest{Tool: shell, Arguments: json.RawMessage(`{}`)}); !d.Allow {
		t.Errorf("after a good reload: %+v, want allow", d)
	}
}

func TestArguments(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 12) + `1` + strings.Repeat(`}`, 12)
	rec, dropped := policy.Arguments(json.RawMessage(`{"s":"x","n":3,"f":1.5,"b":true,"z":null,"l":[1,"a",null],"d":` + deep + `}`))
	want := []string{"$.d.a.a.a.a.a.a.a.a", "$.f", "$.l[2]", "$.z"}
	if diff := cmp.Diff(want, dropped); diff != "" {
		t.Errorf("dropped (-want +got)\n%s", diff)
	}
	for _, k := range []string{"s", "n", "b", "l", "d"} {
		if _, ok := rec.Get(cedarString(k)); !ok {
			t.Errorf("%s missing from %v", k, rec)
		}
	}
	var many strings.Builder
	many.WriteString(`{"a":[`)
	for i := range 5000 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString("1")
	}
	many.WriteString(`]}`)
	_, dropped = policy.Arguments(json.RawMessage(many.String()))
	if len(dropped) != 5000-policy.MaxValues+1 {
		t.Errorf("past MaxValues: %d dropped, want %d", len(dropped), 5000-policy.MaxValues+1)
	}
}

func FuzzArguments(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":null}]}`, `[1]`, `"x"`, `{"a":1e400}`, `{"a":"\u0000"}`} {
		f.Add(s)
	}
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(rules), 0o644); err != nil {
		f.Fatal(err)
	}
	s, err := policy.Load(policy.Enforce, dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		// Whatever the arguments, a decision and no panic.
		_ = s.Decide(context.Background(), wield.PolicyRequest{Tool: reader, Arguments: json.RawMessage(raw)})
	})
}

// TestProgramInnerCallPrincipal: a program's inner call (its caller ID is
// the program's call) is decided as a call of the program's caller.
func TestProgramInnerCallPrincipal(t *testing.T) {
	inner := wield.Caller{Type: wield.CallerProgram, ID: "call-123", Variables: map[string]any{wield.ProgramCallerVariable: "agent-7", wield.ProgramParentVariable: "call-123"}}
	req := policy.Request(wield.PolicyRequest{Tool: &wield.Tool{Name: "t"}, Caller: inner})
	if got := req.Principal.String(); got != `Agent::"agent-7"` {
		t.Errorf("principal of an inner call = %s, want Agent::\"agent-7\"", got)
	}
	if v, _ := req.Context.Get("agent"); v != cedar.String("agent-7") {
		t.Errorf("context.agent = %v, want \"agent-7\"", v)
	}
	if v, _ := req.Context.Get("caller_type"); v != cedar.String("program") {
		t.Errorf("context.caller_type = %v, want \"program\"", v)
	}
}
