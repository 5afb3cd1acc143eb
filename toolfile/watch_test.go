package toolfile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/toolfile"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func hello() map[string]wield.Handler {
	return map[string]wield.Handler{
		"hello": wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`"hello"`), nil
		}),
	}
}

func greet(desc string) string {
	return "name: greet\ndescription: " + desc + "\nentry: {type: builtin, handler: hello}\n"
}

const brokenYAML = "name: greet\ndescription: [unclosed\n"

func write(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// watch starts a watcher whose debounce is too long to fire during a test,
// so only Reload changes the registry.
func watch(t *testing.T, reg *wield.Registry, dir string) *toolfile.Watcher {
	t.Helper()
	l := &toolfile.Loader{Builtins: hello()}
	w, err := l.Watch(t.Context(), reg, []string{dir}, &toolfile.WatchOptions{Debounce: time.Hour, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// events reads the events of one reload, up to reload_completed.
func events(t *testing.T, sub *wield.Subscription) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var got []string
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("events so far %q: %v", got, err)
		}
		s := string(e.Type)
		switch e.Type {
		case wield.EventLoadError:
			s += " " + filepath.Base(e.Source)
		case wield.EventReloadCompleted:
			s += " " + e.Message
		case wield.EventReloadStarted:
		default:
			s += " " + e.Tool
		}
		got = append(got, s)
		if e.Type == wield.EventReloadCompleted {
			return got
		}
	}
}

func TestWatcherReload(t *testing.T) {
	bus := wield.NewBus(0)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: quiet()})
	goTool := wield.Raw("gotool", "A Go tool", &jsonschema.Schema{Type: "object"}, wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`1`), nil
	}))
	reg.MustRegister(goTool)
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.yaml")
	w := watch(t, reg, dir)
	sub := bus.Subscribe(nil)
	defer sub.Close()

	steps := []struct {
		name    string
		change  func()
		wantErr bool
		desc    string // "" means the tool is gone
		events  []string
	}{
		{"add", func() { write(t, file, greet("v1")) }, false, "v1",
			[]string{"reload_started", "tool_added greet", "tool_loaded greet", "reload_completed 1 added, 0 updated, 0 removed"}},
		{"unchanged", func() {}, false, "v1",
			[]string{"reload_started", "reload_completed 0 added, 0 updated, 0 removed"}},
		{"edit", func() { write(t, file, greet("v2")) }, false, "v2",
			[]string{"reload_started", "tool_updated greet", "tool_loaded greet", "reload_completed 0 added, 1 updated, 0 removed"}},
		{"break", func() { write(t, file, brokenYAML) }, true, "v2",
			[]string{"reload_started", "load_error greet.yaml", "reload_completed 0 added, 0 updated, 0 removed"}},
		{"fix", func() { write(t, file, greet("v3")) }, false, "v3",
			[]string{"reload_started", "tool_updated greet", "tool_loaded greet", "reload_completed 0 added, 1 updated, 0 removed"}},
		{"delete", func() {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}, false, "",
			[]string{"reload_started", "tool_removed greet", "reload_completed 0 added, 0 updated, 1 removed"}},
	}
	for _, s := range steps {
		s.change()
		err := w.Reload(t.Context())
		var ps toolfile.Problems
		if s.wantErr != errors.As(err, &ps) || !s.wantErr && err != nil {
			t.Errorf("%s: Reload() = %v, want problems: %v", s.name, err, s.wantErr)
		}
		if diff := cmp.Diff(s.events, events(t, sub)); diff != "" {
			t.Errorf("%s: events (-want +got):\n%s", s.name, diff)
		}
		tool, ok := reg.Tool("greet")
		switch {
		case s.desc == "" && ok:
			t.Errorf("%s: greet is still registered", s.name)
		case s.desc != "" && !ok:
			t.Errorf("%s: greet is not registered", s.name)
		case ok && tool.Description != s.desc:
			t.Errorf("%s: description = %q, want %q", s.name, tool.Description, s.desc)
		}
		if got, _ := reg.Tool("gotool"); got != goTool {
			t.Errorf("%s: the Go tool was touched: %v", s.name, got)
		}
	}
}

func TestWatcherLoadErrorMessage(t *testing.T) {
	bus := wield.NewBus(0)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: quiet()})
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.yaml")
	write(t, file, greet("v1"))
	w := watch(t, reg, dir)
	sub := bus.Subscribe(func(e *wield.Event) bool { return e.Type == wield.EventLoadError })
	defer sub.Close()
	write(t, file, brokenYAML)
	if err := w.Reload(t.Context()); err == nil {
		t.Fatal("Reload() of a broken file = nil, want problems")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	e, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != file || !strings.HasPrefix(e.Message, file+":") {
		t.Errorf("load_error source %q message %q, want the file %s and its problems", e.Source, e.Message, file)
	}
}

func TestWatcherReloadUnderCalls(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0), Logger: quiet()})
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.yaml")
	write(t, file, greet("v1"))
	w := watch(t, reg, dir)
	eng := engine.New(reg, nil)
	defer eng.Close(context.Background())

	var deleted atomic.Bool
	var calls atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := eng.Call(t.Context(), wield.Call{Tool: "greet", Arguments: json.RawMessage(`{}`)})
				// Read after the call: one that started before the delete
				// may look the tool up after the reload that removed it.
				gone := deleted.Load()
				calls.Add(1)
				switch {
				case err != nil:
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				case !res.OK && !(gone && res.ErrorType == wield.ErrToolNotFound):
					mu.Lock()
					failures = append(failures, string(res.ErrorType)+": "+res.Error)
					mu.Unlock()
				}
			}
		})
	}
	steps := []func(){
		func() { write(t, file, greet("v2")) },
		func() { write(t, file, brokenYAML) },
		func() { write(t, file, greet("v3")) },
		func() { write(t, file, greet("v4")) },
		func() { write(t, file, "[") },
		func() { write(t, file, greet("v5")) },
		func() {
			deleted.Store(true)
			if err := os.Remove(file); err != nil {
				t.Error(err)
			}
		},
	}
	for _, step := range steps {
		// Let some calls run on each version before the next change.
		for start := calls.Load(); calls.Load() < start+20; {
			time.Sleep(time.Millisecond)
		}
		step()
		_ = w.Reload(t.Context())
	}
	for start := calls.Load(); calls.Load() < start+20; {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d calls failed, first: %s", len(failures), calls.Load(), failures[0])
	}
	if _, ok := reg.Tool("greet"); ok {
		t.Error("greet is still registered after its file was deleted")
	}
}

func TestWatcherNotices(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet()})
	dir := t.TempDir()
	l := &toolfile.Loader{Builtins: hello()}
	w, err := l.Watch(t.Context(), reg, []string{dir}, &toolfile.WatchOptions{Debounce: 10 * time.Millisecond, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	sub := filepath.Join(dir, "more")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "greet.yaml"), greet("v1"))
	if !eventually(func() bool { _, ok := reg.Tool("greet"); return ok }) {
		t.Fatal("greet did not appear after its file was written")
	}
	// A file in a folder created after the watch started.
	write(t, filepath.Join(sub, "other.yaml"), strings.Replace(greet("v1"), "greet", "other", 1))
	if !eventually(func() bool { _, ok := reg.Tool("other"); return ok }) {
		t.Fatal("other did not appear after its file was written in a new folder")
	}
}

// eventually polls cond for up to 5 seconds.
func eventually(cond func() bool) bool {
	for range 500 {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return cond()
}

func TestWatcherLeavesProgramTools(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: wield.NewBus(0), Logger: quiet()})
	goTool := wield.Raw("greet", "A Go tool", &jsonschema.Schema{Type: "object"}, wield.HandlerFunc(func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`1`), nil
	}))
	reg.MustRegister(goTool)
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.yaml")
	write(t, file, greet("v1"))
	w := watch(t, reg, dir)
	for _, src := range []string{greet("v2"), brokenYAML, ""} {
		if src == "" {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		} else {
			write(t, file, src)
		}
		_ = w.Reload(t.Context())
		if got, _ := reg.Tool("greet"); got != goTool {
			t.Fatalf("after writing %q, greet = %+v, want the Go tool", src, got)
		}
	}
}

func TestWatcherInterval(t *testing.T) {
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet()})
	dir := t.TempDir()
	l := &toolfile.Loader{Builtins: hello()}
	w, err := l.Watch(t.Context(), reg, []string{dir}, &toolfile.WatchOptions{Debounce: time.Hour, Interval: 10 * time.Millisecond, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write(t, filepath.Join(dir, "greet.yaml"), greet("v1"))
	if !eventually(func() bool { _, ok := reg.Tool("greet"); return ok }) {
		t.Fatal("greet did not appear with a reload interval")
	}
}

// TestWatcherCache checks that files a reload takes from its cache (old,
// unchanged) stay, and that a changed, a new and a deleted file are seen.
func TestWatcherCache(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"a", "b", "c"} {
		p := filepath.Join(dir, name+".yaml")
		write(t, p, strings.Replace(greet(fmt.Sprint("v", i)), "greet", "greet_"+name, 1))
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: quiet()})
	w := watch(t, reg, dir)
	if err := w.Reload(t.Context()); err != nil { // from the cache now
		t.Fatal(err)
	}
	before, _ := reg.Tool("greet_a")
	write(t, filepath.Join(dir, "b.yaml"), strings.Replace(greet("changed"), "greet", "greet_b", 1))
	write(t, filepath.Join(dir, "d.yaml"), strings.Replace(greet("new"), "greet", "greet_d", 1))
	if err := os.Remove(filepath.Join(dir, "c.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if after, _ := reg.Tool("greet_a"); after != before {
		t.Error("an unchanged file's tool was replaced")
	}
	if b, _ := reg.Tool("greet_b"); b == nil || b.Description != "changed" {
		t.Errorf("changed file: %+v", b)
	}
	if _, ok := reg.Tool("greet_d"); !ok {
		t.Error("new file not loaded")
	}
	if _, ok := reg.Tool("greet_c"); ok {
		t.Error("deleted file's tool kept")
	}
}

// TestWatcherToolLoadedAtStart: the first load announces each tool a file
// brings as tool_loaded, naming the file and its line.
func TestWatcherToolLoadedAtStart(t *testing.T) {
	bus := wield.NewBus(0)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus, Logger: quiet()})
	sub := bus.Subscribe(nil)
	defer sub.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.yaml")
	write(t, file, greet("v1"))
	watch(t, reg, dir)
	var got []wield.Event
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("events: %v", err)
		}
		if e.Type == wield.EventToolLoaded {
			got = append(got, wield.Event{Type: e.Type, Tool: e.Tool, Source: e.Source, Message: e.Message})
		}
		if e.Type == wield.EventReloadCompleted {
			break
		}
	}
	want := []wield.Event{{Type: wield.EventToolLoaded, Tool: "greet", Source: file, Message: "loaded from " + file + ":1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool_loaded events (-want +got):\n%s", diff)
	}
}
