package toolfile_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/toolfile"
)

// TestRemoteEntryWorkflowCaller: a workflow node's call of a remote tool
// runs on the other server as an ordinary caller's would. Claiming the
// workflow bypass there takes a key with the workflow right, which the
// remote entry's key need not have.
func TestRemoteEntryWorkflowCaller(t *testing.T) {
	url, otherStore := otherServer(t, "s3cret")
	t.Setenv("OTHER_WIELD_KEY", "s3cret")
	dir := t.TempDir()
	src := "name: remote_calc\ndescription: The other server's calculator\nparameters:\n  - {name: expression, type: string, required: true}\nentry: {type: remote, url: \"" + url + "\", tool: calculator, api_key_env: OTHER_WIELD_KEY}\n"
	if err := os.WriteFile(filepath.Join(dir, "calc.yaml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"remote": toolfile.RemoteKind()}}
	set, err := l.LoadDirs(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	res, err := eng.Call(context.Background(), wield.Call{Tool: "remote_calc", Arguments: json.RawMessage(`{"expression":"6*7"}`), Caller: wield.ForWorkflow("wf-1", "node-3")})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("a workflow node's remote call failed: %+v", res)
	}
	page, err := otherStore.Calls(context.Background(), wield.CallQuery{Tool: "calculator"})
	if err != nil || len(page.Records) != 1 {
		t.Fatalf("the other server's records: %+v, %v", page, err)
	}
	if got := page.Records[0].Call.Caller; got.Type == wield.CallerWorkflowNode || got.WorkflowID != "wf-1" {
		t.Errorf("the other server recorded the caller %+v; want the workflow's ID without the bypass", got)
	}
}
