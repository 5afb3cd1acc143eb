package toolfile_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/toolfile"
)

// callTrace is a propagator that writes the call's ID, so that a test sees
// which call's context a request carries.
type callTrace struct{}

func (callTrace) Inject(ctx context.Context, set func(k, v string)) {
	if c, ok := ctx.Value(wield.CallKey).(*wield.Call); ok {
		set("traceparent", "call "+c.ID)
	}
}

// TestRemoteEntryCarriesTraceContext: a remote entry's request to the other
// wield server carries the call's trace context when the process traces.
func TestRemoteEntryCarriesTraceContext(t *testing.T) {
	other, _ := otherServer(t, "s3cret")
	target, _ := url.Parse(other)
	var mu sync.Mutex
	var got []string
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Traceparent"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	t.Setenv("OTHER_WIELD_KEY", "s3cret")
	dir := t.TempDir()
	src := "name: remote_echo\ndescription: The other server's echo\nparameters:\n  - {name: message, type: string, required: true}\nentry: {type: remote, url: \"" + front.URL + "\", tool: echo, api_key_env: OTHER_WIELD_KEY}\n"
	if err := os.WriteFile(filepath.Join(dir, "echo.yaml"), []byte(src), 0o644); err != nil {
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
	wield.SetTracePropagator(callTrace{})
	defer wield.SetTracePropagator(nil)
	res, err := eng.Call(context.Background(), wield.Call{Tool: "remote_echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
	if err != nil || !res.OK {
		t.Fatalf("remote call: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "call "+res.CallID {
		t.Errorf("traceparent %q, want the call's (%s)", got, res.CallID)
	}
}
