package toolfile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/walkroot"
)

// DefaultDebounce is how long a [Watcher] waits after the last change before
// it reloads: an editor's save is often several writes, and a checkout many.
const DefaultDebounce = 200 * time.Millisecond

// WatchOptions configure [Loader.Watch]; nil means defaults.
type WatchOptions struct {
	// Debounce is how long to wait after the last change before reloading;
	// zero means [DefaultDebounce].
	Debounce time.Duration
	// Interval, when positive, also reloads at this interval (seed 004's
	// reload_interval), for file systems where change notifications are
	// unreliable (network mounts, some containers). Zero relies on fsnotify
	// alone.
	Interval time.Duration
	// Logger receives reload failures; nil means slog.Default().
	Logger *slog.Logger
}

// owned is a tool the watcher registered, with the definition it came from
// so that a reload can tell whether it changed.
type owned struct {
	tool *wield.Tool
	def  *Def
}

// Watcher reloads tool files when they change, by the rule of [Set.Apply]
// on every reload as at start. It only adds, updates and removes the tools
// it loaded itself and replaces the registry's defaults (the built-ins)
// that a file names, never the other tools the program registered; a file
// that stops loading keeps its tools at their last good version, so a
// reload never leaves the registry without a working tool because of a
// broken file.
type Watcher struct {
	loader *Loader
	reg    *wield.Registry
	dirs   []string
	log    *slog.Logger

	mu     sync.Mutex      // serialises reloads
	apply  applier         // what it registered, and how
	cache  fileCache       // what unchanged files loaded as
	said   map[string]bool // the problems logged, as of the latest load
	agents []string        // of the first load, whose toolkits it made

	fsw       *fsnotify.Watcher
	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// Watch loads the tool files under dirs into reg once (as [Loader.LoadDirs]
// and [Set.Apply] would), then watches dirs recursively, subfolders created
// later included, and reloads on every change until ctx ends or
// [Watcher.Close] is called. Problems in the files are logged and published
// as load_error events, not returned: the error is only for a watch that
// could not start (an fsnotify error, or ctx's error).
func (l *Loader) Watch(ctx context.Context, reg *wield.Registry, dirs []string, opts *WatchOptions) (*Watcher, error) {
	var o WatchOptions
	if opts != nil {
		o = *opts
	}
	if o.Debounce <= 0 {
		o.Debounce = DefaultDebounce
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	w := &Watcher{loader: l, reg: reg, dirs: append([]string(nil), dirs...), log: o.Logger,
		apply: applier{reg: reg, tools: map[string]owned{}}, cache: fileCache{}, done: make(chan struct{})}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch tool files: %w", err)
	}
	w.fsw = fsw
	// Watch before loading, so a change made during the first load is not
	// missed.
	for _, dir := range w.dirs {
		w.add(dir)
	}
	if err := w.load(ctx, true); err != nil {
		var ps Problems
		if !errors.As(err, &ps) {
			fsw.Close()
			return nil, err
		}
	}
	ctx, w.cancel = context.WithCancel(ctx)
	go w.run(ctx, o)
	return w, nil
}

// add watches dir and every folder under it, skipping hidden ones and
// following a root that is a symbolic link as LoadDirs does.
func (w *Watcher) add(dir string) {
	root := walkroot.Of(dir)
	_ = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		if path != root && strings.HasPrefix(e.Name(), ".") {
			return filepath.SkipDir
		}
		if err := w.fsw.Add(path); err != nil {
			w.log.Warn("watch tool folder", "dir", path, "error", err)
		}
		return nil
	})
}

func (w *Watcher) run(ctx context.Context, o WatchOptions) {
	defer close(w.done)
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	defer debounce.Stop()
	var tick <-chan time.Time
	if o.Interval > 0 {
		t := time.NewTicker(o.Interval)
		defer t.Stop()
		tick = t.C
	}
	reload := func() {
		// Problems in the files were logged by the reload itself.
		var ps Problems
		if err := w.Reload(ctx); err != nil && ctx.Err() == nil && !errors.As(err, &ps) {
			w.log.Warn("reload tool files", "error", err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				w.add(ev.Name) // a new folder: watch it and what is already in it
			}
			debounce.Reset(o.Debounce)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.log.Warn("watch tool files", "error", err)
			debounce.Reset(o.Debounce) // events may be lost: look again
		case <-debounce.C:
			reload()
		case <-tick:
			reload()
		}
	}
}

// Agents returns the names of the agents whose toolkits the first load
// made (later loads leave toolkits alone).
func (w *Watcher) Agents() []string { return slices.Clone(w.agents) }

// Close stops watching. The tools stay registered.
func (w *Watcher) Close() error {
	var err error
	w.closeOnce.Do(func() {
		if w.cancel != nil {
			w.cancel()
			<-w.done
		}
		err = w.fsw.Close()
	})
	return err
}

// Reload loads the files again now and applies the difference to the
// registry by the rule of [Set.Apply]: new tools are registered, changed ones
// updated, and those whose file was deleted or that were removed from a file
// that loads are removed (a built-in they replaced comes back). A file with
// problems keeps its tools at their last good version. It publishes
// reload_started, a load_error per broken file and reload_completed on the
// registry's bus, and logs the problems that the previous load did not have
// (a duplicate name introduced by this change, say), each once. The error
// is [Problems] when some files have problems (the reload was applied all
// the same), or ctx's error.
func (w *Watcher) Reload(ctx context.Context) error {
	return w.load(ctx, false)
}

func (w *Watcher) publish(e wield.Event) {
	if bus := w.reg.Bus(); bus != nil {
		bus.Publish(e)
	}
}

func (w *Watcher) load(ctx context.Context, first bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.publish(wield.Event{Type: wield.EventReloadStarted})
	set, err := w.loader.loadDirs(ctx, w.dirs, w.cache)
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("reload tool files: %w", cerr)
	}
	var ps Problems
	if err != nil && !errors.As(err, &ps) {
		return fmt.Errorf("reload tool files: %w", err)
	}

	// Files with problems, in order, with their messages.
	broken := map[string]bool{}
	msgs := map[string][]string{}
	var brokenOrder []string
	for _, p := range ps {
		if !broken[p.File] {
			brokenOrder = append(brokenOrder, p.File)
		}
		broken[p.File] = true
		msgs[p.File] = append(msgs[p.File], p.String())
	}
	for _, f := range brokenOrder {
		w.publish(wield.Event{Type: wield.EventLoadError, Source: f, Message: strings.Join(msgs[f], "\n")})
	}

	res := w.apply.apply(set, broken, first)
	if first {
		for _, a := range set.Agents {
			w.agents = append(w.agents, a.Name)
		}
	}
	w.tell(append(set.Problems, res.warnings...), set.Notes)
	if err := res.err(); err != nil {
		w.log.Warn("tool files: " + err.Error())
	}

	w.publish(wield.Event{Type: wield.EventReloadCompleted,
		Message: fmt.Sprintf("%d added, %d updated, %d removed", res.added, res.updated, res.removed)})
	if len(ps) > 0 {
		return ps
	}
	return nil
}

// tell logs the problems and notes that the previous load did not have:
// errors at error level, warnings at warning level, notes as information.
func (w *Watcher) tell(ps, notes []Problem) {
	said := make(map[string]bool, len(ps)+len(notes))
	for i, p := range append(ps[:len(ps):len(ps)], notes...) {
		key := p.String()
		said[key] = true
		if w.said[key] {
			continue
		}
		at := fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
		switch {
		case i >= len(ps):
			w.log.Info(p.Message, "at", at)
		case p.Warning:
			w.log.Warn(p.Message, "at", at)
		default:
			w.log.Error(p.Message, "at", at)
		}
	}
	w.said = said
}

// same reports whether a reloaded tool is the one registered: the same
// definition and the same compiled tool (schemas included).
func same(a, b owned) bool {
	if a.tool == b.tool {
		return true
	}
	if !reflect.DeepEqual(a.def, b.def) {
		return false
	}
	ja, err1 := json.Marshal(a.tool)
	jb, err2 := json.Marshal(b.tool)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
