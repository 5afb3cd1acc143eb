package toolfile

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/wieldhq/wield/httptool"
	"github.com/wieldhq/wield/limit"
)

// seed003At is where the MCP servers of the TypeScript agent's config.yml
// are written.
var seed003At = map[string]Position{
	"filesystem": {File: "testdata/config/seed003.yml", Line: 23, Col: 7},
	"database":   {File: "testdata/config/seed003.yml", Line: 26, Col: 7},
}

// seed003Missing are the warnings of the TypeScript agent's config.yml
// while its folders are missing, as they are under testdata.
func seed003Missing(t *testing.T) []string {
	t.Helper()
	abs, err := filepath.Abs("testdata/config")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, d := range []string{"data", "docs", "src"} {
		out = append(out, fmt.Sprintf("testdata/config/seed003.yml:%d:7: tools.allowedPaths[%d]: the folder \"./%s\" (%s) does not exist yet: the file tools will use it once it is created", 11+i, i, d, filepath.Join(abs, d)))
	}
	return out
}

func warningStrings(ps Problems) []string {
	var out []string
	for _, p := range ps {
		if !p.Warning {
			out = append(out, "not a warning: "+p.String())
			continue
		}
		out = append(out, p.String())
	}
	return out
}

// ignoreWarnings leaves Config.Warnings to the tests that check them.
// ignoreWarnings leaves the warnings out of a comparison of configs, and
// the servers they turned off (MCPServersOff, checked against the warnings
// by TestLoadConfigFirstRun).
var ignoreWarnings = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().String() == ".Warnings" || p.Last().String() == ".MCPServersOff"
}, cmp.Ignore())

func TestLoadConfigSeed003(t *testing.T) {
	t.Setenv("WEB_SEARCH_API_KEY", "tvly-secret")
	got, err := LoadConfig("testdata/config/seed003.yml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seed003Missing(t), warningStrings(got.Warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
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
		MCPServerAt: seed003At,
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }), ignoreWarnings); diff != "" {
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
		ToolDirs: []string{filepath.Join("testdata", "config", "tools", "native"), "/opt/wield/tools"},
		// Where each is named, for a folder that does not exist.
		ToolDirAt: map[string]Position{
			filepath.Join("testdata", "config", "tools", "native"): {File: "testdata/config/wield.yaml", Line: 2, Col: 13},
			"/opt/wield/tools": {File: "testdata/config/wield.yaml", Line: 2, Col: 27},
		},
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
		MCPServerAt: map[string]Position{
			"fs": {File: "testdata/config/wield.yaml", Line: 20, Col: 5},
			"db": {File: "testdata/config/wield.yaml", Line: 24, Col: 5},
		},
	}
	abs, err := filepath.Abs("testdata/config/data")
	if err != nil {
		t.Fatal(err)
	}
	wantWarnings := []string{
		"testdata/config/wield.yaml:13:17: allowed_paths[0]: the folder \"./data\" (" + abs + ") does not exist yet: the file tools will use it once it is created",
		"testdata/config/wield.yaml:13:25: allowed_paths[1]: the folder \"/srv/shared\" (/srv/shared) does not exist yet: the file tools will use it once it is created",
	}
	if diff := cmp.Diff(wantWarnings, warningStrings(got.Warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	prefix := cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })
	if diff := cmp.Diff(want, got, prefix, ignoreWarnings); diff != "" {
		t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
	}
	wantGuard := &httptool.Guard{Allow: want.HTTPAllow, AllowHosts: want.HTTPAllowHosts}
	if diff := cmp.Diff(wantGuard, got.Guard(), prefix); diff != "" {
		t.Errorf("Guard mismatch (-want +got):\n%s", diff)
	}
}

// The TypeScript agent's config.yml as written, on a first run: no key
// yet, and the folders not made. It loads, web_search off and the missing folders
// named, each warning where its setting is written.
func TestLoadConfigSeed003FirstRun(t *testing.T) {
	t.Setenv("WEB_SEARCH_API_KEY", "")
	os.Unsetenv("WEB_SEARCH_API_KEY")
	got, err := LoadConfig("testdata/config/seed003.yml")
	if err != nil {
		t.Fatal(err)
	}
	want := seed003Missing(t)
	want = append(want, "testdata/config/seed003.yml:18:14: web_search is off: environment variable WEB_SEARCH_API_KEY is not set (tools.webSearch.apiKey)")
	if diff := cmp.Diff(want, warningStrings(got.Warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got.WebSearch != (WebSearch{}) {
		t.Errorf("web search %+v, want off", got.WebSearch)
	}
	if len(got.AllowedPaths) != 3 || len(got.MCPServers) != 2 {
		t.Errorf("allowed paths %q, servers %+v: want all three folders and both servers", got.AllowedPaths, got.MCPServers)
	}
}

// Every ${VAR} and every path of the configuration, unset or missing: a
// warning where the feature is optional (and it is off), a problem where the
// setting cannot work without it. A default is never a concern.
func TestLoadConfigFirstRun(t *testing.T) {
	t.Setenv("WIELD_TEST_SET", "v")
	t.Setenv("WIELD_TEST_EMPTY", "")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "here"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const unset = "${WIELD_TEST_UNSET}"
	tests := []struct {
		name, src string
		want      Config // compared without Warnings and MCPServerAt
		warnings  []string
		problems  []string // when set, the config does not load
	}{
		// Optional features: off, with a warning naming the variable.
		{"web_search key", "web_search: {provider: tavily, api_key: \"" + unset + "\", max_results: 3}\n", Config{},
			[]string{"1:42: web_search is off: environment variable WIELD_TEST_UNSET is not set (web_search.api_key)"}, nil},
		{"webSearch key", "tools:\n  webSearch:\n    provider: brave\n    apiKey: " + unset + "\n", Config{},
			[]string{"4:13: web_search is off: environment variable WIELD_TEST_UNSET is not set (tools.webSearch.apiKey)"}, nil},
		{"web_search provider", "web_search: {provider: \"" + unset + "\", max_results: 3}\n", Config{},
			[]string{"1:25: web_search is off: environment variable WIELD_TEST_UNSET is not set (web_search.provider)"}, nil},
		{"web_search empty key", "web_search: {provider: bing, api_key: \"${WIELD_TEST_EMPTY}\"}\n", Config{},
			[]string{"1:39: web_search is off: environment variable WIELD_TEST_EMPTY is empty (web_search.api_key), and provider bing needs a key"}, nil},
		{"web_search key set", "web_search: {provider: bing, api_key: \"${WIELD_TEST_SET}\"}\n", Config{WebSearch: WebSearch{Provider: "bing", APIKey: "v"}}, nil, nil},
		{"web_search key default", "web_search: {provider: bing, api_key: \"${WIELD_TEST_UNSET:-k}\"}\n", Config{WebSearch: WebSearch{Provider: "bing", APIKey: "k"}}, nil, nil},
		{"duckduckgo needs no key", "web_search: {provider: duckduckgo}\n", Config{WebSearch: WebSearch{Provider: "duckduckgo"}}, nil, nil},
		{"enabled mcp server", "mcp_servers:\n  - name: a\n    url: http://127.0.0.1:1/mcp\n    headers: {Authorization: \"Bearer " + unset + "\"}\n  - {name: b, command: [b]}\n",
			Config{MCPServers: []MCPServer{{Name: "b", Command: []string{"b"}, Transport: "stdio", Enabled: true}}},
			[]string{"4:38: mcp server a is off: environment variable WIELD_TEST_UNSET is not set (mcp_servers[0].headers.Authorization)"}, nil},
		{"mcp server enabled by an unset variable", "mcp_servers: [{name: a, command: [a], enabled: \"" + unset + "\"}]\n", Config{},
			[]string{"1:49: mcp server a is off: environment variable WIELD_TEST_UNSET is not set (mcp_servers[0].enabled)"}, nil},
		{"disabled mcp server", "mcp_servers: [{name: a, url: \"http://" + unset + "/mcp\", enabled: false}]\n", Config{}, nil, nil},
		{"allowed path missing", "allowed_paths: [here, missing]\n", Config{AllowedPaths: []string{filepath.Join(dir, "here"), filepath.Join(dir, "missing")}},
			[]string{"1:23: allowed_paths[1]: the folder \"missing\" (" + filepath.Join(dir, "missing") + ") does not exist yet: the file tools will use it once it is created"}, nil},
		{"allowed path unset", "tools:\n  allowedPaths: [here, \"" + unset + "/x\"]\n", Config{AllowedPaths: []string{filepath.Join(dir, "here")}},
			[]string{"2:25: tools.allowedPaths[1]: environment variable WIELD_TEST_UNSET is not set: the folder is left out of the file tools' allowed folders"}, nil},
		{"allowed path default", "allowed_paths: [\"${WIELD_TEST_UNSET:-here}\"]\n", Config{AllowedPaths: []string{filepath.Join(dir, "here")}}, nil, nil},
		// Mistakes that a first run does not excuse.
		{"allowed path is a file", "allowed_paths: [file]\n", Config{}, nil,
			[]string{"1:17: allowed_paths[0]: \"file\" (" + filepath.Join(dir, "file") + ") is not a folder"}},
		{"provider needs a key", "tools:\n  webSearch: {provider: tavily}\n", Config{}, nil,
			[]string{"2:3: tools.webSearch: provider tavily needs an API key (apiKey)"}},
		{"google needs cx", "web_search: {provider: google, api_key: k}\n", Config{}, nil,
			[]string{"1:41: web_search: provider google needs its engine id (cx) with the key: write api_key as KEY:CX"}},
		{"web_search and a mistake", "web_search: {provider: tavily, api_key: \"" + unset + "\", colour: red}\n", Config{},
			[]string{"1:42: web_search is off: environment variable WIELD_TEST_UNSET is not set (web_search.api_key)"},
			[]string{`1:64: web_search: unknown field "colour"`}},
		// Settings that cannot work without their variable.
		{"store", "store: \"postgres://" + unset + "/db\"\n", Config{}, nil, []string{"1:20: store: environment variable WIELD_TEST_UNSET is not set"}},
		{"tool_dirs", "tool_dirs: [\"" + unset + "\"]\n", Config{}, nil, []string{"1:14: tool_dirs[0]: environment variable WIELD_TEST_UNSET is not set"}},
		{"redis", "redis: {url: \"redis://" + unset + "\"}\n", Config{}, nil, []string{"1:23: redis.url: environment variable WIELD_TEST_UNSET is not set"}},
		{"server keys", "server: {keys: [\"" + unset + "\"]}\n", Config{}, nil, []string{"1:18: server.keys[0]: environment variable WIELD_TEST_UNSET is not set"}},
		{"timeout", "timeout: \"" + unset + "\"\n", Config{}, nil, []string{"1:11: timeout: environment variable WIELD_TEST_UNSET is not set"}},
		{"concurrency", "concurrency: {max: \"" + unset + "\"}\n", Config{}, nil, []string{"1:21: concurrency.max: environment variable WIELD_TEST_UNSET is not set"}},
		{"http_allow", "http_allow: [\"" + unset + "\"]\n", Config{}, nil, []string{"1:15: http_allow[0]: environment variable WIELD_TEST_UNSET is not set"}},
		{"secret_names", "secret_names: [\"" + unset + "\"]\n", Config{}, nil, []string{"1:17: secret_names[0]: environment variable WIELD_TEST_UNSET is not set"}},
		{"env_allow", "env_allow: [\"" + unset + "\"]\n", Config{}, nil, []string{"1:14: env_allow[0]: environment variable WIELD_TEST_UNSET is not set"}},
		{"mcp resource", "mcp:\n  resources: [{uri: \"a://" + unset + "\", name: a, text: t}]\n", Config{}, nil,
			[]string{"2:26: mcp.resources[0].uri: environment variable WIELD_TEST_UNSET is not set"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "wield.yaml")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			at := func(ps []string) []string {
				out := make([]string, len(ps))
				for i, p := range ps {
					out[i] = path + ":" + p
				}
				return out
			}
			got, err := LoadConfig(path)
			if tt.problems != nil {
				var ps Problems
				if !errors.As(err, &ps) || got != nil {
					t.Fatalf("LoadConfig = %v, %v; want problems", got, err)
				}
				var errs, warns []string
				for _, p := range ps {
					if p.Warning {
						warns = append(warns, p.String())
					} else {
						errs = append(errs, p.String())
					}
				}
				if diff := cmp.Diff(at(tt.problems), errs); diff != "" {
					t.Errorf("problems (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(at(tt.warnings), warns, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("warnings among the problems (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(at(tt.warnings), warningStrings(got.Warnings), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			got.MCPServerAt = nil
			if diff := cmp.Diff(&tt.want, got, ignoreWarnings, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("LoadConfig mismatch (-want +got):\n%s", diff)
			}
			// Each server an unset variable turned off is in MCPServersOff
			// with the warning that says so, and no other.
			off := map[string]Problem{}
			for _, w := range got.Warnings {
				if name, rest, ok := strings.Cut(strings.TrimPrefix(w.Message, "mcp server "), " is off:"); ok && rest != "" && strings.HasPrefix(w.Message, "mcp server ") {
					off[name] = w
				}
			}
			if diff := cmp.Diff(off, got.MCPServersOff, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("MCPServersOff (-from the warnings +got):\n%s", diff)
			}
		})
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
		"19:14: enabled: expected true or false, got string",
		`22:5: mcp_servers: duplicate server name "twice"`,
		`23:8: store: "mysql://db" is neither sqlite:PATH nor postgres://...`,
		`24:14: http_allow: "10.0.0.0/33" is not a CIDR range like "10.0.0.0/8", or one with a port like "127.0.0.1:8080"`,
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
			if diff := cmp.Diff(&tt.want, got, cmpopts.EquateEmpty()); diff != "" {
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
	// Unset variables where they turn a feature off, also through aliases.
	f.Add([]byte("web_search: &w {provider: \"${P}\", api_key: ${K}, max_results: ${N}}\nmcp_servers: [{name: a, url: \"${U}\", enabled: ${E}}, {name: b, command: [b], env: *w}]\nallowed_paths: [\"${D}\", *w]\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		c := newConfigDecoder("fuzz.yaml", func(string) (string, bool) { return "", false })
		c.config(src, ".")
	})
}

// TestLoadConfigSearchBaseURL: web_search (and the config.yml form
// tools.webSearch) takes the provider's base URL; one that is not an
// http(s) URL of scheme, host and path is refused where it is written,
// without showing a password written in it.
func TestLoadConfigSearchBaseURL(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, src := range []string{
		"web_search: {provider: brave, api_key: k, base_url: \"http://searx.lan:8888/brave\"}\n",
		"tools:\n  webSearch: {provider: brave, apiKey: k, baseUrl: \"http://searx.lan:8888/brave\"}\n",
	} {
		got, err := LoadConfig(write("ok.yaml", src))
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		want := WebSearch{Provider: "brave", APIKey: "k", BaseURL: "http://searx.lan:8888/brave"}
		if diff := cmp.Diff(want, got.WebSearch); diff != "" {
			t.Errorf("%s: web search (-want +got):\n%s", src, diff)
		}
	}
	f := write("bad.yaml", "web_search: {provider: brave, api_key: k, base_url: \"https://ann:pw@h/x\"}\n")
	_, err := LoadConfig(f)
	var ps Problems
	if !errors.As(err, &ps) || len(ps) != 1 {
		t.Fatalf("LoadConfig = %v, want one problem", err)
	}
	if want := f + `:1:53: base_url: web search: base URL "https://ann:xxxxx@h/x" carries user information; give the key as the API key instead`; ps[0].String() != want {
		t.Errorf("problem = %s\nwant %s", ps[0], want)
	}
}
