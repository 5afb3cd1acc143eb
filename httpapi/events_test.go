package httpapi

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// sseLines opens /v1/events resuming after last and returns the stream's
// lines up to and including the first event's data line for tool want,
// skipping pings; the read is bounded by ten seconds.
func sseLines(t *testing.T, base, last string, header bool, want string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := base + "/v1/events"
	if !header && last != "" {
		u += "?last_event_id=" + url.QueryEscape(last)
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if header && last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line == ": ping" || line == "retry: 2000" || line == ": connected" {
			continue
		}
		if strings.HasPrefix(line, "id: ") || strings.HasPrefix(line, "event: ") {
			continue
		}
		lines = append(lines, line)
		if strings.Contains(line, `"tool":"`+want+`"`) {
			return lines
		}
	}
	t.Fatalf("stream ended (%v) before %s; read %q", sc.Err(), want, lines)
	return nil
}

// tools keeps the lines' tool names and ": lost" comments, for comparing.
func tools(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, ": lost") {
			out = append(out, l)
			continue
		}
		if _, rest, ok := strings.Cut(l, `"tool":"`); ok {
			name, _, _ := strings.Cut(rest, `"`)
			out = append(out, name)
		}
	}
	return out
}

// TestEventsResume: a resume after an event the server holds replays what
// followed it and says nothing lost; one it cannot honour (an ID from before
// a restart or from another server, an old numeric ID, garbage) says ": lost"
// before anything else and streams on, never silently.
func TestEventsResume(t *testing.T) {
	s, hs := newTestServer(t, nil)
	bus := s.eng.Bus()
	elsewhere := wield.NewBus(4).Publish(wield.Event{}) // a server before its restart
	var ids []string
	for _, tool := range []string{"a", "b", "c"} {
		ids = append(ids, bus.Publish(wield.Event{Type: wield.EventToolAdded, Tool: tool}))
	}
	tests := []struct {
		name   string
		last   string
		header bool
		want   []string
	}{
		{"held ID, header", ids[0], true, []string{"b", "c", "live"}},
		{"held ID, parameter", ids[1], false, []string{"c", "live"}},
		{"ID from before a restart", elsewhere, true, []string{": lost", "a", "b", "c", "live"}},
		{"ID of the future", wield.NewID(), true, []string{": lost", "live"}},
		{"numeric ID of the old form", "2", true, []string{": lost", "live"}},
		{"garbage", "x\u2028<script>", false, []string{": lost", "live"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The live event is published once the stream is open: a
			// goroutine publishes until the reader has it (bounded).
			done := make(chan struct{})
			defer close(done)
			go func() {
				for range 500 {
					select {
					case <-done:
						return
					case <-time.After(20 * time.Millisecond):
						bus.Publish(wield.Event{Type: wield.EventToolUpdated, Tool: "live"})
					}
				}
			}()
			got := tools(sseLines(t, hs.URL, tt.last, tt.header, "live"))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClientEventsLost: the Go client reports the server's ": lost" notes:
// a gap for a resume the server cannot honour, nothing for one it can.
func TestClientEventsLost(t *testing.T) {
	s, hs := newTestServer(t, nil)
	bus := s.eng.Bus()
	held := bus.Publish(wield.Event{Type: wield.EventToolAdded, Tool: "a"})
	bus.Publish(wield.Event{Type: wield.EventToolAdded, Tool: "b"})
	c := NewClient(hs.URL, "")
	for _, tt := range []struct {
		last    string
		wantGap bool
	}{{held, false}, {"from before a restart", true}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		stream, err := c.Events(ctx, EventQuery{LastEventID: tt.last, Types: []string{"tool_added"}})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		if tt.wantGap {
			bus.Publish(wield.Event{Type: wield.EventToolAdded, Tool: "live"})
		}
		e, err := stream.Next()
		if err != nil {
			t.Fatal(err)
		}
		n, gap := stream.Lost()
		if n != 0 || gap != tt.wantGap {
			t.Errorf("resume after %q: first event %s, Lost() = %d, %v; want 0, %v", tt.last, e.Tool, n, gap, tt.wantGap)
		}
		stream.Close()
		cancel()
	}
}

// TestEventStreamBoundsEvent: an event's data lines are held until the
// blank line that ends it; a server that never sends one cannot make the
// client hold more than an event's limit, and the client says so.
func TestEventStreamBoundsEvent(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		line := "data: " + strings.Repeat("x", 1<<10) + "\n"
		for range 8 << 10 { // 8 MiB, twice the limit
			if _, err := io.WriteString(w, line); err != nil {
				return
			}
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	events, err := NewClient(srv.URL, "").Events(context.Background(), EventQuery{})
	if err != nil {
		t.Fatal(err)
	}
	defer events.Close()
	got := make(chan error, 1)
	go func() {
		_, err := events.Next()
		got <- err
	}()
	select {
	case err := <-got:
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("Next = %v, want an error saying the event is too large", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next still reading an event of 8 MiB with no end")
	}
}
