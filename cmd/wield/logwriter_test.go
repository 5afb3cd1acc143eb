package main

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
)

// slowWriter records what it gets, one Write at a time, and lets the test
// hold a write while others arrive.
type slowWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
	hold   chan struct{} // when set, the first Write waits for it
	inside chan struct{}
	fail   error
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if w.hold != nil {
		h := w.hold
		w.hold = nil
		close(w.inside)
		<-h
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	if w.fail != nil {
		return 0, w.fail
	}
	return w.buf.Write(p)
}

// TestGroupWriterKeepsEveryLine writes lines from many goroutines and
// finds each once, whole, in the output.
func TestGroupWriterKeepsEveryLine(t *testing.T) {
	out := &slowWriter{}
	g := newGroupWriter(out)
	const goroutines, lines = 8, 500
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range lines {
				fmt.Fprintf(g, "line %d %d\n", i, j)
			}
		}()
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	var want []string
	for i := range goroutines {
		for j := range lines {
			want = append(want, fmt.Sprintf("line %d %d", i, j))
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %d lines, want %d, each once", len(got), len(want))
	}
}

// TestGroupWriterGroups holds one write while other lines arrive: they go
// out together in the next write, in the order they came, and a lone line
// is written before its Write returns.
func TestGroupWriterGroups(t *testing.T) {
	out := &slowWriter{hold: make(chan struct{}), inside: make(chan struct{})}
	g := newGroupWriter(out)
	release := out.hold
	done := make(chan struct{})
	go func() {
		g.Write([]byte("first\n"))
		close(done)
	}()
	<-out.inside
	for _, l := range []string{"a\n", "b\n", "c\n"} {
		if n, err := g.Write([]byte(l)); n != len(l) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", l, n, err)
		}
	}
	close(release)
	<-done
	if got, want := out.buf.String(), "first\na\nb\nc\n"; got != want || out.writes != 2 {
		t.Fatalf("wrote %q in %d writes, want %q in 2", got, out.writes, want)
	}
	g.Write([]byte("lone\n"))
	if got := out.buf.String(); !strings.HasSuffix(got, "lone\n") || out.writes != 3 {
		t.Fatalf("a lone line: %q after %d writes", got, out.writes)
	}
}

// TestGroupWriterReportsFailure: the Write that writes gets the error.
func TestGroupWriterReportsFailure(t *testing.T) {
	boom := errors.New("disk full")
	g := newGroupWriter(&slowWriter{fail: boom})
	if _, err := g.Write([]byte("x\n")); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}
