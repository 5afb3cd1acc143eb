package builtin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
)

// callTrace is a propagator that writes the call's ID, so that a test sees
// which call's context a request carries.
type callTrace struct{}

func (callTrace) Inject(ctx context.Context, set func(k, v string)) {
	if c, ok := ctx.Value(wield.CallKey).(*wield.Call); ok {
		set("traceparent", "call "+c.ID)
	}
}

// TestNetCarriesTraceContext: web_fetch's and http_request's requests carry
// their call's trace context when the process traces; a traceparent among
// the model's headers does not stand in for it.
func TestNetCarriesTraceContext(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Get("Traceparent")
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	opts := builtin.NetOptions{Guard: loopback()}
	e := netEngine(t, append(builtin.NetTools(opts), builtin.WebFetch(opts))...)
	wield.SetTracePropagator(callTrace{})
	defer wield.SetTracePropagator(nil)
	fetched := netCall(t, e, "web_fetch", map[string]any{"url": srv.URL + "/fetch"})
	requested := netCall(t, e, "http_request", map[string]any{"method": "GET", "url": srv.URL + "/request", "headers": map[string]string{"traceparent": "forged by the model"}})
	if !fetched.OK || !requested.OK {
		t.Fatalf("calls failed: %s %s", fetched.Error, requested.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]string{"/fetch": "call " + fetched.CallID, "/request": "call " + requested.CallID}
	for path, w := range want {
		if got[path] != w {
			t.Errorf("%s: traceparent %q, want %q", path, got[path], w)
		}
	}
}
