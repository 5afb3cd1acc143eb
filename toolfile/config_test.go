package toolfile

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/limit"
	"go.yaml.in/yaml/v3"
)

func TestLoadConfigSeed003(t *testing.T) {
	t.Setenv("WEB_SEARCH_API_KEY", "tvly-secret")
	got, err := LoadConfig("testdata/config/seed003.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		DefaultTimeout: 30 * time.Second,
		Concurrency:    limit.Config{MaxConcurrent: 3},
		AllowedPaths:   []string{"testdata/config/data", "testdata/config/docs", "testdata/config/src"},
		WebSearch:      WebSearch{Provider: "tavily", APIKey: "tvly-secret", MaxResults: 10},
		MCPServers: []MCPServer{
			{Name: "filesystem", URL: "http://localhost:3000", Transport: "http", Enabled: true},
			{Name: "database", URL: "http://localhost:3001", Transport: "http", Enabled: false},
		},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadConfigWield(t *testing.T) {
	t.Setenv("DB_TOKEN", "tok")
	t.Setenv("WIELD_KEY", "key-1")
	t.Setenv("BRAVE_KEY", "")
	got, err := LoadConfig("testdata/config/wield.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		ToolDirs:       []string{filepath.Join("testdata", "config", "tools", "native"), "/opt/wield/tools"},
		DefaultTimeout: 30 * time.Second,
		NetworkTimeout: 90 * time.Second,
		Concurrency: limit.Config{
			MaxConcurrent: 12,
			QueueSize:     50,
			QueueTimeout:  1500 * time.Millisecond,
			Strategy:      limit.Priority,
			Buckets: map[string]limit.Bucket{
				"http": {Limit: 5, Weight: 1},
				"ai":   {Limit: 4, Weight: 2},
			},
		},
		AllowedPaths: []string{"testdata/config/data", "/srv/shared"},
		EnvAllow:     []string{"APP_MODE", "PUBLIC_*"},
		WebSearch:    WebSearch{Provider: "brave", APIKey: "none", MaxResults: 5},
		MCPServers: []MCPServer{
			{Name: "fs", Command: []string{"mcp-fs", "/data"}, Transport: "stdio", Env: map[string]string{"ROOT": "/data"}, Tags: []string{"files"}, Enabled: true},
			{Name: "db", URL: "http://localhost:3001/mcp", Transport: "sse", Headers: map[string]string{"Authorization": "Bearer tok"}},
		},
		Store:          "sqlite:wield.db",
		Server:         Server{Addr: ":8080", Keys: []string{"key-1", "literal-${NOT_EXPANDED}"}},
		HTTPAllow:      []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		HTTPAllowHosts: []string{"api.internal"},
		SecretNames:    []string{"GITHUB_TOKEN"},
	}
	prefix := cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })
	if diff := cmp.Diff(want, got, prefix); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
	wantGuard := &httptool.Guard{Allow: want.HTTPAllow, AllowHosts: want.HTTPAllowHosts}
	if diff := cmp.Diff(wantGuard, got.Guard(), prefix); diff != "" {
		t.Errorf("Guard mismatch (-want +got):\n%s", diff)
	}
}

// problems loads a config and returns its problems as strings.
func configProblems(t *testing.T, path string) []string {
	t.Helper()
	cfg, err := LoadConfig(path)
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("LoadConfig(%s) = %v, want Problems", path, err)
	}
	if cfg != nil {
		t.Errorf("LoadConfig(%s) returned a config with problems", path)
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestLoadConfigMistakes(t *testing.T) {
	f := "testdata/config/mistakes.yaml"
	got := configProblems(t, f)
	want := []string{
		`1:1: config: unknown field "tool_dir"`,
		`2:10: timeout: "soon" is not a duration like "30s"`,
		"3:18: network_timeout: must not be negative",
		"5:8: max: expected a non-negative integer, got string",
		"6:15: queue_size: must not be negative",
		`7:13: strategy: "lifo" is not fifo, priority or reject`,
		"9:5: bucket http: limit 1 is less than its weight 2",
		`9:33: bucket http: unknown field "burst"`,
		"10:16: allowed_paths: expected a list of strings, got string",
		`11:24: provider: "altavista" is not one of tavily, brave, bing, google, bocha, duckduckgo`,
		"13:5: mcp server neither: needs a url or a command",
		"14:5: mcp server both: has both a url and a command",
		"18:18: mcp_servers[2].url: environment variable MCP_HOST is not set",
		"19:14: enabled: expected true or false, got string",
		`22:5: mcp_servers: duplicate server name "twice"`,
		`23:8: store: "mysql://db" is neither sqlite:PATH nor postgres://...`,
		`24:14: http_allow: "10.0.0.0/33" is not a CIDR range like "10.0.0.0/8"`,
		"26:3: tools.timeout: default timeout already set by timeout at 2:1",
		"27:3: tools.maxConcurrent: concurrency max already set by concurrency.max at 5:3",
		`28:3: tools: unknown field "color"`,
		"29:9: server: expected a mapping, got string",
	}
	for i := range want {
		want[i] = f + ":" + want[i]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadConfigEnv(t *testing.T) {
	t.Setenv("WIELD_TEST_ADDR", ":9090")
	t.Setenv("WIELD_TEST_EMPTY", "")
	tests := []struct {
		name, src string
		want      Config
		problems  []string
	}{
		{"set", "server:\n  addr: ${WIELD_TEST_ADDR}\n", Config{Server: Server{Addr: ":9090"}}, nil},
		{"default", "server: {addr: \"${WIELD_TEST_UNSET:-:8080}\"}\n", Config{Server: Server{Addr: ":8080"}}, nil},
		{"empty takes default", "server: {addr: \"${WIELD_TEST_EMPTY:-:7070}\"}\n", Config{Server: Server{Addr: ":7070"}}, nil},
		{"empty without default", "store: \"sqlite:${WIELD_TEST_EMPTY}x.db\"\n", Config{Store: "sqlite:x.db"}, nil},
		{"number", "concurrency:\n  max: ${WIELD_TEST_UNSET:-7}\ntimeout: ${WIELD_TEST_UNSET:-2}\n", Config{DefaultTimeout: 2 * time.Second, Concurrency: limit.Config{MaxConcurrent: 7}}, nil},
		{"escaped", "secret_names: [\"$${WIELD_TEST_ADDR}\"]\n", Config{SecretNames: []string{"${WIELD_TEST_ADDR}"}}, nil},
		{"missing", "server:\n  addr: x-${WIELD_TEST_UNSET}\n  keys: [\"${WIELD_TEST_UNSET}\"]\n", Config{}, []string{
			"2:11: server.addr: environment variable WIELD_TEST_UNSET is not set",
			"3:11: server.keys[0]: environment variable WIELD_TEST_UNSET is not set",
		}},
		{"unterminated", "store: sqlite:${WIELD_TEST_ADDR\n", Config{}, []string{"1:15: store: unterminated ${"}},
		{"bad name", "store: sqlite:${1X}\n", Config{}, []string{`1:15: store: "1X" is not an environment variable name`}},
		{"quoted", "server:\n  addr: \"é-${WIELD_TEST_UNSET}\"\n", Config{}, []string{"2:12: server.addr: environment variable WIELD_TEST_UNSET is not set"}},
		{"escape before", "server:\n  addr: \"\\t${WIELD_TEST_UNSET}\"\n", Config{}, []string{"2:9: server.addr: environment variable WIELD_TEST_UNSET is not set"}},
		{"alias", "secret_names: [&a \"${WIELD_TEST_ADDR}\", *a, &b \"$${X}\", *b]\n", Config{SecretNames: []string{":9090", ":9090", "${X}", "${X}"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wield.yaml")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.problems != nil {
				want := make([]string, len(tt.problems))
				for i, p := range tt.problems {
					want[i] = path + ":" + p
				}
				if diff := cmp.Diff(want, configProblems(t, path)); diff != "" {
					t.Errorf("problems mismatch (-want +got):\n%s", diff)
				}
				return
			}
			got, err := LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	_, err := LoadConfig(filepath.Join(t.TempDir(), "none.yaml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadConfig of a missing file = %v, want fs.ErrNotExist", err)
	}
}

func ExampleLoadConfig() {
	dir, err := os.MkdirTemp("", "wield")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.yml")
	src := "tools:\n  timeout: 45000\n  maxConcurrent: 3\n  webSearch:\n    provider: \"${WIELD_EXAMPLE_PROVIDER:-duckduckgo}\"\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		panic(err)
	}
	cfg, err := LoadConfig(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.DefaultTimeout, cfg.Concurrency.MaxConcurrent, cfg.WebSearch.Provider)
	// Output: 45s 3 duckduckgo
}

// FuzzConfig checks that no input makes the config decoder panic.
func FuzzConfig(f *testing.F) {
	for _, name := range []string{"seed003.yml", "wield.yaml", "mistakes.yaml"} {
		src, err := os.ReadFile(filepath.Join("testdata", "config", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte("store: ${A:-${B}}\nhttp_allow: [\"::ffff:10.0.0.1\"]\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		c := &configDecoder{decoder: decoder{file: "fuzz.yaml"}, expanded: map[*yaml.Node]bool{}, setBy: map[string]string{},
			lookup: func(string) (string, bool) { return "", false }}
		c.config(src, ".")
	})
}
