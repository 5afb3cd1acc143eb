package ui_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// TestConsoleLiveProgress: a running call's progress shows on the live
// page beside it, as a bar with the figures and the tool's message, which
// is text (markup and a bidirectional override shown, not obeyed); once the
// call ends, it leaves the running list for the finished ones.
func TestConsoleLiveProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	release := make(chan struct{})
	report := wield.Raw("report", "Reports progress until released.", &jsonschema.Schema{Type: "object"},
		wield.HandlerFunc(func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			wield.ReportProgress(ctx, 1, 2, `<img src=x onerror="window.pwned=1">`+"\u202eusers.txt")
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			wield.ReportProgress(ctx, 2, 2, "done")
			return json.RawMessage(`{}`), nil
		}))
	c := newConsoleWith(t, consoleOptions{setup: func(reg *wield.Registry) { reg.MustRegister(report) }})
	b := newBrowser(t, 2*time.Minute)
	b.open(t, c.URL+"/#/live")
	b.wait(t, "the stream", `document.querySelector("#stream-state").dataset.state === "live"`, wait)

	done := make(chan error, 1)
	go func() {
		_, err := c.eng.Call(context.Background(), wield.Call{Tool: "report", Timeout: time.Minute})
		done <- err
	}()
	b.wait(t, "the progress of the running call", `(() => {
		const p = document.querySelector(".feed-item.running .progress-report progress");
		return !!p && p.value === 1 && p.max === 2 })()`, wait)
	got := b.text(t, ".feed-item.running .progress-report")
	if want := `1 of 2: <img src=x onerror="window.pwned=1">\u202eusers.txt`; got != want {
		t.Errorf("progress text %q, want %q", got, want)
	}
	b.wait(t, "no markup obeyed", `!document.querySelector("main img") && !window.pwned`, wait)
	b.shot(t, "live-progress")
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b.wait(t, "the call finished", `!document.querySelector(".feed-item.running") && (document.querySelector("main table")?.textContent || "").includes("report")`, wait)
}
