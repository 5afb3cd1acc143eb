package toolfile

import (
	"testing"
	"time"
)

// TestLoadConfigRetry checks retry: {max_attempts, backoff, max_backoff}:
// read as written (seconds for a bare number), absent fields left to the
// engine's defaults, and refused at their line when zero, negative,
// unknown, or when the longest wait would be shorter than the first (the
// other one's default counting).
func TestLoadConfigRetry(t *testing.T) {
	for src, want := range map[string]Retry{
		"retry: {max_attempts: 5, backoff: 50ms, max_backoff: 1s}\n": {5, 50 * time.Millisecond, time.Second},
		"retry: {max_attempts: 1}\n":                                 {MaxAttempts: 1},
		"retry: {backoff: 2s}\n":                                     {Backoff: 2 * time.Second},
		"retry: {max_backoff: 30}\n":                                 {MaxBackoff: 30 * time.Second},
		"timeout: 5s\n":                                              {},
	} {
		cfg, err := LoadConfig(writeConfig(t, src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if cfg.Retry != want {
			t.Errorf("%q: %+v, want %+v", src, cfg.Retry, want)
		}
	}
	for src, want := range map[string]string{
		"retry: {max_attempts: 0}\n":                 ":1:23: retry.max_attempts: must be at least 1 (1: no retries; leave it out for the default, 3)",
		"retry: {max_attempts: -2}\n":                ":1:23: max_attempts: must not be negative",
		"retry: {backoff: 0s}\n":                     ":1:18: retry.backoff: must be more than 0 (leave it out for the default, 100ms)",
		"retry: {max_backoff: soon}\n":               `:1:22: max_backoff: "soon" is not a duration like "30s"`,
		"retry: {jitter: true}\n":                    `:1:9: retry: unknown field "jitter"`,
		"retry: 3\n":                                 ":1:8: retry: expected a mapping, got integer",
		"retry: {backoff: 1s, max_backoff: 500ms}\n": ":1:35: retry: max_backoff 500ms is shorter than backoff 1s, the first wait: raise max_backoff or lower backoff",
		"retry: {backoff: 5s}\n":                     ":1:18: retry: max_backoff 2s (the default) is shorter than backoff 5s, the first wait: raise max_backoff or lower backoff",
		"retry: {max_backoff: 50ms}\n":               ":1:22: retry: max_backoff 50ms is shorter than backoff 100ms, the first wait: raise max_backoff or lower backoff",
	} {
		p := writeConfig(t, src)
		if got := configProblems(t, p); len(got) != 1 || got[0] != p+want {
			t.Errorf("%q: problems %q, want %q", src, got, p+want)
		}
	}
}
