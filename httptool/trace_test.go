package httptool

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/wieldhq/wield"
)

// callTrace is a propagator that writes the call's ID, so that a test sees
// which call's context a request carries.
type callTrace struct{}

func (callTrace) Inject(ctx context.Context, set func(k, v string)) {
	if c, ok := ctx.Value(wield.CallKey).(*wield.Call); ok {
		set("traceparent", "call "+c.ID)
	}
}

// TestToolCarriesTraceContext: when the process traces, the request of an
// HTTP tool carries its call's trace context, in place of a traceparent the
// spec sets; when it does not, the spec's headers go as they are.
func TestToolCarriesTraceContext(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Traceparent"))
		mu.Unlock()
	}))
	defer srv.Close()
	tool, err := New("t", "test tool", testInput, Spec{URL: srv.URL, Headers: map[string]string{"traceparent": "from the spec"}}, localOnly())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), wield.CallKey, &wield.Call{ID: "c1"})
	if _, err := tool.Handler.Handle(ctx, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	wield.SetTracePropagator(callTrace{})
	defer wield.SetTracePropagator(nil)
	if _, err := tool.Handler.Handle(ctx, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != "from the spec" || got[1] != "call c1" {
		t.Errorf("traceparent headers %q, want the spec's without tracing, then the call's", got)
	}
}
