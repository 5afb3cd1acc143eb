package mcpbridge_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/mcpbridge"
	"github.com/wieldhq/wield/sqlite"
)

// TestServerTaskListenGoroutines counts goroutines: subscriptions/listen
// streams following a running task hold one each (the request's), and none
// is left once their clients end them, nor once the server closes.
func TestServerTaskListenGoroutines(t *testing.T) {
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "wield.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(ctx)
	slow := wield.Func("slow", "Waits for its end.", func(ctx context.Context, _ srvNoArgs) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	slow.Task = wield.TaskRequired
	var logged strings.Builder
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logged.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelError}))
	f := srvNew(t, &mcpbridge.ServerOptions{Calls: store, MaxSessionsPerClient: 64, Logger: log}, &engine.Options{Store: store}, slow)
	h := f.srv.Handler()
	started := taskPost(t, h, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{}}, true)
	id := started.Result.TaskID
	if id == "" {
		t.Fatalf("tools/call = %+v", started)
	}
	count := func() int {
		// The count once it holds still for 100 ms.
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(srvWait); time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			m := runtime.NumGoroutine()
			if m == n {
				break
			}
			n = m
		}
		return n
	}
	listen := func(ctx context.Context, n int) chan struct{} {
		done := make(chan struct{})
		go func() {
			defer close(done)
			body := srvEraBodyOf(n, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{id}}},
				map[string]any{"extensions": map[string]any{mcpbridge.TasksExtension: map[string]any{}}}, "")
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
			r.Host = "127.0.0.1"
			srvSetEraHeaders(r.Header, "subscriptions/listen", "")
			h.ServeHTTP(httptest.NewRecorder(), r)
		}()
		return done
	}
	const streams = 20
	for _, end := range []string{"client", "close"} {
		before := count()
		lctx, cancel := context.WithCancel(ctx)
		var done []chan struct{}
		for i := range streams {
			done = append(done, listen(lctx, i+1))
		}
		deadline := time.Now().Add(srvWait)
		for runtime.NumGoroutine() < before+streams && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n < before+streams {
			t.Errorf("%s: %d goroutines with %d streams open, %d before", end, n, streams, before)
		}
		if end == "close" {
			f.srv.Close()
		} else {
			cancel()
		}
		for _, d := range done {
			select {
			case <-d:
			case <-time.After(srvWait):
				t.Fatalf("%s: a listen stream did not end", end)
			}
		}
		cancel()
		if n := count(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%s: %d goroutines once the streams ended, %d before:\n%s", end, n, before, buf[:runtime.Stack(buf, true)])
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if logged.Len() > 0 {
		t.Errorf("streams that ended logged errors (their ends are no failures):\n%s", logged.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
