//go:build unix

package journeys

import (
	"fmt"
	"testing"
	"time"
)

// TestJourneyEventsWindow: a server keeps the newest 1024 events (two a
// call) for clients that resume. A client back after 500 calls gets all
// 500 and nothing said lost; one back after 520 more gets ": lost" (the
// event it resumes after is gone), then the 512 calls the server still
// holds, the newest ones, in order.
func TestJourneyEventsWindow(t *testing.T) {
	u := newUser(t)
	s := u.serve()
	c := openSSE(t, s, "")
	echoCalls(t, s, "first", 1)
	fs := c.read(1, 10*time.Second)
	if len(fs) != 1 || fs[0].id == "" {
		t.Fatalf("live stream: %+v, want one event", fs)
	}
	c.cancel()

	within := echoCalls(t, s, "within", 500)
	back := openSSE(t, s, fs[0].id)
	fs2 := back.read(500, 30*time.Second)
	back.cancel()
	calls, lost := frameCalls(fs2)
	if fmt.Sprint(calls) != fmt.Sprint(within) || len(lost) != 0 {
		t.Fatalf("resume after 500 calls: %d calls (want the 500 made), comments %q (want none)", len(calls), lost)
	}

	past := echoCalls(t, s, "past", 520)
	late := openSSE(t, s, fs2[len(fs2)-1].id)
	fs3 := late.read(512, 30*time.Second)
	late.cancel()
	calls, lost = frameCalls(fs3)
	if len(fs3) == 0 || fs3[0].comment != "lost" || len(lost) != 1 {
		t.Errorf("resume after 520 more calls: comments %q, want the stream to begin with ': lost' and say it once", lost)
	}
	if fmt.Sprint(calls) != fmt.Sprint(past[520-512:]) {
		t.Errorf("resume after 520 more calls: %d calls, want the newest 512 of the 520 in order", len(calls))
	}
}
