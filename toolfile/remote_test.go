package toolfile_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/httpapi"
	"github.com/wieldhq/wield/sqlite"
	"github.com/wieldhq/wield/toolfile"
)

// otherServer is a real wield server (the REST API over an engine with the
// calculator and echo) that the remote entries call.
func otherServer(t *testing.T, secret string) (string, wield.Storage) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "other.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo(), builtin.Calculator(), builtin.Sleep())
	eng := engine.New(reg, &engine.Options{Store: store})
	t.Cleanup(func() { eng.Close(context.Background()) })
	keys, err := httpapi.NewKeyring("", httpapi.ConfigKey(0, secret))
	if err != nil {
		t.Fatal(err)
	}
	s, err := httpapi.New(httpapi.Options{Engine: eng, Store: store, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs.URL, store
}

func TestRemoteEntry(t *testing.T) {
	url, otherStore := otherServer(t, "s3cret")
	t.Setenv("OTHER_WIELD_KEY", "s3cret")
	dir := t.TempDir()
	files := map[string]string{
		"calc.yaml":  "name: remote_calc\ndescription: The other server's calculator\nparameters:\n  - {name: expression, type: string, required: true}\nentry: {type: remote, url: \"" + url + "\", tool: calculator, api_key_env: OTHER_WIELD_KEY, timeout: 10s}\n",
		"echo.yaml":  "name: echo\ndescription: The other server's echo, same name\nparameters:\n  - {name: message, type: string, required: true}\nentry: {type: remote, url: \"" + url + "\", api_key_env: OTHER_WIELD_KEY}\n",
		"nokey.yaml": "name: remote_nokey\ndescription: Without the key\nparameters:\n  - {name: message, type: string, required: true}\nentry: {type: remote, url: \"" + url + "\", tool: echo}\n",
		"gone.yaml":  "name: remote_gone\ndescription: A tool the other server lacks\nentry: {type: remote, url: \"" + url + "\", api_key_env: OTHER_WIELD_KEY}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
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
	call := func(tool, args string) *wield.Result {
		res, err := eng.Call(context.Background(), wield.Call{Tool: tool, Arguments: json.RawMessage(args), Caller: wield.ForConversation("agent", "conv-remote")})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call("remote_calc", `{"expression":"6*7"}`); !res.OK || string(res.Output) != `{"expression":"6*7","result":42}` {
		t.Errorf("remote_calc: %s %s %s", res.Output, res.ErrorType, res.Error)
	}
	if res := call("echo", `{"message":"über"}`); !res.OK || !strings.Contains(string(res.Output), "über") {
		t.Errorf("echo: %s %s", res.Output, res.Error)
	}
	// The remote tool's own failure keeps its type and message.
	if res := call("remote_calc", `{"expression":"1/0"}`); res.OK || res.ErrorType != wield.ErrExecution || !strings.Contains(res.Error, "not a finite number") {
		t.Errorf("remote failure: %s %q", res.ErrorType, res.Error)
	}
	if res := call("remote_nokey", `{"message":"x"}`); res.OK || !strings.Contains(res.Error, "answered 401") {
		t.Errorf("no key: %s %q", res.ErrorType, res.Error)
	}
	if res := call("remote_gone", `{}`); res.OK || res.ErrorType != wield.ErrToolNotFound {
		t.Errorf("missing remote tool: %s %q", res.ErrorType, res.Error)
	}
	// The other server recorded the calls under the caller's conversation.
	page, err := otherStore.Calls(context.Background(), wield.CallQuery{ConversationID: "conv-remote"})
	if err != nil || len(page.Records) < 3 {
		t.Errorf("records on the other server: %+v %v", page, err)
	}
	// Bad entries are reported at load.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: r\ndescription: d\nentry: {type: remote, url: \"ftp://x\"}\n"), 0o644)
	if _, err := l.LoadDirs(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("bad url: %v", err)
	}
}

// TestRemoteEntryTimeout: a remote entry's own timeout ends the call as a
// timeout, saying which tool and how long, not as an execution error of
// "context deadline exceeded".
func TestRemoteEntryTimeout(t *testing.T) {
	url, _ := otherServer(t, "s3cret")
	t.Setenv("OTHER_WIELD_KEY", "s3cret")
	file := filepath.Join(t.TempDir(), "slow.yaml")
	src := "name: remote_sleep\ndescription: The other server's sleep\nparameters:\n  - {name: duration, type: number, required: true}\n" +
		"entry: {type: remote, url: \"" + url + "\", tool: sleep, api_key_env: OTHER_WIELD_KEY, timeout: 200ms}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	l := toolfile.Loader{Kinds: map[string]toolfile.Kind{"remote": toolfile.RemoteKind()}}
	set, err := l.LoadDirs(context.Background(), file)
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())
	res, err := eng.Call(context.Background(), wield.Call{Tool: "remote_sleep", Arguments: json.RawMessage(`{"duration":5}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := "the remote tool sleep did not answer within 200ms (the entry's timeout)"
	if res.OK || res.ErrorType != wield.ErrTimeout || res.Error != want {
		t.Errorf("result = %s %q; want timeout %q", res.ErrorType, res.Error, want)
	}
	// A quick call under the same entry still works.
	res, err = eng.Call(context.Background(), wield.Call{Tool: "remote_sleep", Arguments: json.RawMessage(`{"duration":0}`)})
	if err != nil || !res.OK {
		t.Errorf("quick call: %+v %v", res, err)
	}
}
