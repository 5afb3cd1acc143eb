package toolfile

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// settings are the keys of wield.yaml for what only Go options set
// before: the request body limit, the file tools' size limits, the Redis
// limiter's poll interval and the MCP server's instructions.
type settings struct {
	MaxBody                   int64
	MaxFileRead, MaxFileWrite int64
	PollInterval              time.Duration
	Instructions              string
}

func settingsOf(c *Config) settings {
	return settings{c.Server.MaxBody, c.MaxFileRead, c.MaxFileWrite, c.Redis.PollInterval, c.MCP.Instructions}
}

func TestLoadConfigSettings(t *testing.T) {
	tests := []struct {
		name, src string
		want      settings
	}{
		{"none: the defaults", "server: {addr: \":8080\"}\n", settings{}},
		{"all", `server: {max_body: 1048576}
max_file_read: 2048
max_file_write: 4096
redis: {url: "redis://127.0.0.1:6379/0", poll_interval: 250ms}
mcp:
  instructions: |
    Use calculator for arithmetic.
    Ask before deleting.
`, settings{1 << 20, 2048, 4096, 250 * time.Millisecond, "Use calculator for arithmetic.\nAsk before deleting.\n"}},
		{"seconds", "redis: {url: \"redis://h:6379/0\", poll_interval: 2}\n", settings{PollInterval: 2 * time.Second}},
		{"from the environment", "server: {max_body: \"${WIELD_TEST_BODY:-65536}\"}\nmax_file_read: \"${WIELD_TEST_READ:-100}\"\nmcp: {instructions: \"${WIELD_TEST_INSTR:-hello}\"}\n",
			settings{MaxBody: 65536, MaxFileRead: 100, Instructions: "hello"}},
		{"beside resources", "mcp:\n  instructions: Be brief.\n  resources: [{uri: \"note://a\", name: a, text: hi}]\n", settings{Instructions: "Be brief."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig(writeConfig(t, tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, settingsOf(cfg)); diff != "" {
				t.Errorf("settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfigSettingMistakes(t *testing.T) {
	src := `server:
  max_body: 0
max_file_read: 10MB
max_file_write: -1
redis:
  url: "redis://127.0.0.1:6379/0"
  poll_interval: 0
mcp:
  instructions: [be, brief]
`
	p := writeConfig(t, src)
	want := []string{
		"2:13: server.max_body: must be at least 1 (bytes; leave it out for the defaults, 8388608 for REST and 4194304 for MCP)",
		"3:16: max_file_read: expected a non-negative integer, got string",
		"4:17: max_file_write: must not be negative",
		"7:18: redis.poll_interval: must be more than 0 (leave it out for the default, 100ms)",
		"9:17: instructions: expected a string, got list",
	}
	for i := range want {
		want[i] = p + ":" + want[i]
	}
	if diff := cmp.Diff(want, configProblems(t, p)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	zero := writeConfig(t, "max_file_read: 0\nmax_file_write: 0\n")
	want = []string{
		zero + ":1:16: max_file_read: must be at least 1 (bytes; leave it out for the default, 10485760)",
		zero + ":2:17: max_file_write: must be at least 1 (bytes; leave it out for the default, 10485760)",
	}
	if diff := cmp.Diff(want, configProblems(t, zero)); diff != "" {
		t.Errorf("problems of zeros (-want +got):\n%s", diff)
	}
}

// TestLooksLikeConfigSettings: a file of the new keys alone is taken for a
// configuration, as a file of any other top-level key is.
func TestLooksLikeConfigSettings(t *testing.T) {
	for _, src := range []string{"max_file_read: 2048\n", "max_file_write: 2048\n"} {
		if p := writeConfig(t, src); !LooksLikeConfig(p) {
			t.Errorf("LooksLikeConfig(%q) = false, want true", src)
		}
	}
}
