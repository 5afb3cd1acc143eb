package toolfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/limit"
)

func TestLoadConfigSeed004(t *testing.T) {
	got, err := LoadConfig("testdata/config/seed004.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		ToolDirs:         []string{filepath.Join("testdata", "config", "tools")},
		ToolDirAt:        map[string]Position{filepath.Join("testdata", "config", "tools"): {File: "testdata/config/seed004.yaml", Line: 2, Col: 18}},
		DefaultTimeout:   30 * time.Second,
		Concurrency:      limit.Config{MaxConcurrent: 10, QueueSize: 100, Strategy: limit.FIFO, Buckets: map[string]limit.Bucket{"http": {Limit: 5, Weight: 1}, "ai": {Limit: 2, Weight: 1}}},
		Reload:           Reload{Interval: 5 * time.Second},
		StrictValidation: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadConfigReload(t *testing.T) {
	tests := []struct {
		yaml string
		want Reload
		err  string
	}{
		{"reload: {watch: true, interval: 2s}\n", Reload{Watch: true, Interval: 2 * time.Second}, ""},
		{"reload: {watch: true}\n", Reload{Watch: true}, ""},
		{"auto_reload: false\nreload_interval: 5\nwatch_for_changes: true\n", Reload{Watch: true}, ""},
		{"reload: {watch: true}\nwatch_for_changes: false\n", Reload{}, "2:1: watch_for_changes: reload on change already set by reload.watch at 1:10"},
		{"reload: {every: 2s}\n", Reload{}, `unknown field "every"`},
		{"tool_dirs: [a]\ntools_directory: b\n", Reload{}, "tool folders already set by tool_dirs"},
		{"concurrency: {max: 2, max_concurrent: 3}\n", Reload{}, "concurrency max already set"},
		{"concurrency: {buckets: {http: {limit: 1}}, bucket_limits: {http: 2}}\n", Reload{}, "buckets already set"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "wield.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LoadConfig(path)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: got %v, want an error with %q", tt.yaml, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.yaml, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got.Reload); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.yaml, diff)
		}
	}
}

func TestLoadConfigRedis(t *testing.T) {
	tests := []struct {
		yaml    string
		backend string
		redis   Redis
		err     string
	}{
		{"concurrency: {backend: redis, max: 4}\nredis: {url: \"redis://127.0.0.1:6379/0\", prefix: team, lease_ttl: 2s, share_events: true}\n", "redis", Redis{URL: "redis://127.0.0.1:6379/0", Prefix: "team", LeaseTTL: 2 * time.Second, ShareEvents: true}, ""},
		{"concurrency: {backend: local}\n", "local", Redis{}, ""},
		{"concurrency: {backend: redis}\n", "", Redis{}, "redis.url is not set"},
		{"concurrency: {backend: etcd}\n", "", Redis{}, `"etcd" is not local or redis`},
		{"redis: {url: \"127.0.0.1:6379\"}\n", "", Redis{}, "is not a redis://"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "wield.yaml")
		os.WriteFile(path, []byte(tt.yaml), 0o644)
		got, err := LoadConfig(path)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: got %v, want an error with %q", tt.yaml, err, tt.err)
			}
			continue
		}
		if err != nil || got.LimiterBackend != tt.backend || got.Redis != tt.redis {
			t.Errorf("%q: got %q %+v %v", tt.yaml, got.LimiterBackend, got.Redis, err)
		}
	}
}
