package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wieldhq/wield/httpapi"
)

// TestProgressLineWidth: the progress line shows at most progressWords
// characters of a tool's message, counted after its control and
// bidirectional characters are written as escapes, so that a message of
// escape sequences cannot wrap the line (the line is redrawn with a
// carriage return, which goes back one terminal row only).
func TestProgressLineWidth(t *testing.T) {
	for _, msg := range []string{
		strings.Repeat("\x1b", 100),
		strings.Repeat("\u202e", 100),
		strings.Repeat("\xff", 100),
		strings.Repeat("a", 1<<20),
	} {
		r := &lineReport{}
		r.ReportProgress(1, 2, msg)
		got := r.text()
		words := strings.TrimSuffix(strings.TrimPrefix(got, " (1 of 2: "), ")")
		if n := utf8.RuneCountInString(words); n > progressWords+1 { // and the mark of the cut
			t.Errorf("message %.8q: the line shows %d characters of it, want at most %d: %q", msg, n, progressWords+1, got)
		}
		if strings.ContainsAny(words, "\x1b\u202e") || !utf8.ValidString(words) {
			t.Errorf("message %.8q shown as %q: not escaped", msg, got)
		}
	}
}

// TestFollowProgressServerHangs: a server that never answers the event
// stream, or answers it and then says nothing, neither holds the call back
// nor keeps the command from exiting once the call is over.
func TestFollowProgressServerHangs(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("tool") == "answers" {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		select { // no answer, or no event
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	a := &app{}
	c := httpapi.NewClient(srv.URL, "k")
	for _, tool := range []string{"silent", "answers"} {
		start := time.Now()
		followed := make(chan func(), 1)
		go func() {
			followed <- a.followProgress(context.Background(), c, tool, httpapi.CallRequest{ID: "cli-1"}, &lineReport{}, func() {})
		}()
		var stop func()
		select {
		case stop = <-followed:
		case <-time.After(10 * time.Second):
			t.Fatalf("tool %s: the call waited %v for the event stream to open", tool, time.Since(start))
		}
		if d := time.Since(start); d > 2*progressOpenWait {
			t.Errorf("tool %s: the call waited %v for the event stream, want at most %v", tool, d, progressOpenWait)
		}
		stopped := make(chan struct{})
		start = time.Now()
		go func() { stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			t.Fatalf("tool %s: stopping the progress line waited %v on the event stream", tool, time.Since(start))
		}
	}
}
