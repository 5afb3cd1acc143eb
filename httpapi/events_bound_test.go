package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/sqlite"
)

// streamServer serves echo with opts (Engine and Store set here).
func streamServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "w.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0)})
	reg.MustRegister(builtin.Echo())
	eng := engine.New(reg, &engine.Options{Store: store})
	t.Cleanup(func() { eng.Close(context.Background()) })
	opts.Engine, opts.Store = eng, store
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(hs.Close)
	return hs
}

// openStream opens /v1/events with key ("" for none) and returns the
// answer: its body is the stream, closed at the test's end.
func openStream(t *testing.T, hs *httptest.Server, key string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", hs.URL+"/v1/events", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	// A client of its own: each stream holds its connection.
	c := &http.Client{Transport: &http.Transport{}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestEventsBoundPerClient: a client (an address without keys, a key with
// them) holds at most MaxStreamsPerClient event streams; one more is 429
// too_many_streams saying so, and a stream closed gives its place back.
// Every stream costs every event published its own filtering, encoding
// and write: 500 streams from one client made each call some 100 times
// slower.
func TestEventsBoundPerClient(t *testing.T) {
	hs := streamServer(t, Options{MaxStreamsPerClient: 2})
	first := openStream(t, hs, "")
	if first.StatusCode != 200 || openStream(t, hs, "").StatusCode != 200 {
		t.Fatal("streams within the bound refused")
	}
	resp := openStream(t, hs, "")
	b := make([]byte, 512)
	n, _ := resp.Body.Read(b)
	if resp.StatusCode != http.StatusTooManyRequests || errorCode(b[:n]) != CodeTooManyStreams || !strings.Contains(string(b[:n]), "2 event streams open") {
		t.Fatalf("a stream past the bound: %d %s", resp.StatusCode, b[:n])
	}
	first.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for openStream(t, hs, "").StatusCode != 200 {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's place was not given back within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}

	file := filepath.Join(t.TempDir(), "keys.json")
	a, _, err := CreateKey(file, "a", RightRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	bkey, _, err := CreateKey(file, "b", RightRead, nil)
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyring(file)
	if err != nil {
		t.Fatal(err)
	}
	hs = streamServer(t, Options{Keys: ring, MaxStreamsPerClient: 2})
	for range 2 {
		if code := openStream(t, hs, a).StatusCode; code != 200 {
			t.Fatalf("key a's stream within the bound: %d", code)
		}
	}
	if code := openStream(t, hs, a).StatusCode; code != http.StatusTooManyRequests {
		t.Errorf("key a's third stream: %d, want 429", code)
	}
	if code := openStream(t, hs, bkey).StatusCode; code != 200 {
		t.Errorf("key b's stream, from the same address as a's two: %d, want 200 (the bound is per key)", code)
	}
}
