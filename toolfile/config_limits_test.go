package toolfile

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// limits are the settings that bound what clients make a server hold.
type limits struct {
	BodyTimeout                       time.Duration
	MaxConnsPerClient                 int
	SessionIdle                       time.Duration
	MaxSessions, MaxSessionsPerClient int
}

func limitsOf(c *Config) limits {
	return limits{c.Server.BodyTimeout, c.Server.MaxConnsPerClient, c.MCP.SessionIdle, c.MCP.MaxSessions, c.MCP.MaxSessionsPerClient}
}

func TestLoadConfigLimits(t *testing.T) {
	tests := []struct {
		name, src string
		want      limits
	}{
		{"none", "server: {addr: \":8080\"}\n", limits{}},
		{"all", `server:
  body_timeout: 20s
  max_conns_per_client: 64
mcp:
  session_idle: 5m
  max_sessions: 2000
  max_sessions_per_client: 20
`, limits{20 * time.Second, 64, 5 * time.Minute, 2000, 20}},
		{"seconds", "server: {body_timeout: 15}\nmcp: {session_idle: 90}\n", limits{BodyTimeout: 15 * time.Second, SessionIdle: 90 * time.Second}},
		{"from the environment", "mcp: {max_sessions: \"${WIELD_TEST_MAX:-300}\"}\n", limits{MaxSessions: 300}},
		{"beside resources", "mcp:\n  max_sessions_per_client: 5\n  resources: [{uri: \"note://a\", name: a, text: hi}]\n", limits{MaxSessionsPerClient: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := LoadConfig(writeConfig(t, tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, limitsOf(cfg)); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfigLimitMistakes(t *testing.T) {
	src := `server:
  body_timeout: soon
  max_conns_per_client: -1
mcp:
  session_idle: -5s
  max_sessions: many
  max_sessions_per_client: 1.5
  max_session: 3
`
	p := writeConfig(t, src)
	want := []string{
		`2:17: body_timeout: "soon" is not a duration like "30s"`,
		"3:25: max_conns_per_client: must not be negative",
		"5:17: session_idle: must not be negative",
		"6:17: max_sessions: expected a non-negative integer, got string",
		"7:28: max_sessions_per_client: expected a non-negative integer, got number",
		`8:3: mcp: unknown field "max_session"`,
	}
	for i := range want {
		want[i] = p + ":" + want[i]
	}
	if diff := cmp.Diff(want, configProblems(t, p)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
