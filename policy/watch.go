package policy

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/wieldhq/wield/internal/walkroot"
)

// settle is how long a burst of file changes is let end before the files
// are read again: an editor writes a file in several steps.
const settle = 100 * time.Millisecond

// Watch reloads the set whenever a policy file under its paths changes
// (on change notifications, and every interval when interval > 0, for file
// systems without reliable ones), until stop is called. After each reload
// it calls done with the reload's error: nil when the new policies are in
// force, else the error of a file that did not parse, the last good
// policies staying in force; it is not called again for files unchanged
// since, nor for the same error. done runs on the watcher's goroutine.
func (s *Set) Watch(interval time.Duration, done func(error)) (stop func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	for _, p := range s.paths {
		addTree(w, p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.Close()
		var tick <-chan time.Time
		if interval > 0 {
			t := time.NewTicker(interval)
			defer t.Stop()
			tick = t.C
		}
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		defer timer.Stop()
		// Only news is told: new policies in force, or a new error (an
		// interval reload of unchanged files, or of the same broken file,
		// says nothing again).
		lastErr := ""
		reload := func() {
			changed, err := s.reload()
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if done != nil && (changed || msg != lastErr) && (changed || err != nil) {
				done(err)
			}
			lastErr = msg
		}
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Has(fsnotify.Create) {
					if st, err := os.Stat(ev.Name); err == nil && st.IsDir() {
						addTree(w, ev.Name)
					}
				}
				if filepath.Ext(ev.Name) == Ext || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					timer.Reset(settle)
				}
			case <-w.Errors:
			case <-timer.C:
				reload()
			case <-tick:
				reload()
			}
		}
	}()
	return func() { cancel(); wg.Wait() }, nil
}

// addTree watches dir and the folders under it; a file is watched through
// its folder, so that a file replaced by a rename is still seen.
func addTree(w *fsnotify.Watcher, p string) {
	st, err := os.Stat(p)
	if err != nil {
		return
	}
	if !st.IsDir() {
		_ = w.Add(filepath.Dir(p))
		return
	}
	_ = filepath.WalkDir(walkroot.Of(p), func(path string, e fs.DirEntry, err error) error {
		if err == nil && e.IsDir() {
			_ = w.Add(path)
		}
		return nil
	})
}
