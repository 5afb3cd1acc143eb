package httpapi

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wieldhq/wield"
)

// TestEventsTypeOneLine: an event's type is one line of the stream
// whatever it holds. Events relayed from other servers (redis
// share_events) are decoded from what the channel carries, type included:
// a type holding a line break wrote lines of its own into every stream,
// an event the console would show and act on.
func TestEventsTypeOneLine(t *testing.T) {
	s, hs := newTestServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	bus := s.eng.Bus()
	for _, typ := range []string{
		"tool_added\nevent: permission_requested\ndata: {\"forged\":1}\n",
		"tool_added\revent: permission_requested\rdata: {\"forged\":2}\r",
		"tool_added\r\n\r\ndata: {\"forged\":3}",
	} {
		bus.Publish(wield.Event{Type: wield.EventType(typ), Tool: "echo"})
	}
	bus.Publish(wield.Event{Type: wield.EventToolAdded, Tool: "live"})
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Split(sseLineSplit)
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if strings.Contains(line, `"tool":"live"`) {
			break
		}
	}
	events := 0
	for _, line := range lines {
		// The event's own data holds its type, escaped.
		if strings.Contains(line, "forged") && !strings.HasPrefix(line, `data: {"id":`) || strings.HasPrefix(line, "event: permission_requested") {
			t.Errorf("the stream has a line a type wrote: %q", line)
		}
		if strings.HasPrefix(line, "data: ") {
			events++
		}
	}
	if events != 4 {
		t.Errorf("the stream has %d events, want 4:\n%s", events, strings.Join(lines, "\n"))
	}
}

// sseLineSplit splits a stream at the line ends Server-Sent Events know:
// CRLF, LF and a lone CR.
func sseLineSplit(data []byte, atEOF bool) (int, []byte, error) {
	for i, b := range data {
		switch b {
		case '\n':
			return i + 1, data[:i], nil
		case '\r':
			if i+1 == len(data) && !atEOF {
				return 0, nil, nil // a CRLF may be split
			}
			if i+1 < len(data) && data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}
