package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield/httpapi"
)

// exportTools are tool files with a toolset and an agent, and a tool whose
// description holds the characters HTML escaping would change.
const exportTools = `name: web_search
description: Search the web for information using Bocha AI search engine
parameters:
  - name: query
    type: string
    description: Search query using keywords.
    required: true
  - name: freshness
    type: string
    description: "Time range filter: 'noLimit', 'oneDay', ..."
    required: false
    default: noLimit
  - name: count
    type: integer
    description: Number of results to return (1-50)
    required: false
    default: 10
entry: {type: builtin, handler: echo}
---
name: compare
description: "Say whether a < b && b > c"
parameters:
  - name: a
    type: number
    description: "the <left> side & more"
entry: {type: builtin, handler: echo}
---
kind: toolset
name: web
tools: [web_search, http_get]
---
kind: agent
name: researcher
tools: [calculator]
tool_sets: [web]
`

// exportDir writes exportTools into a folder of the test's own.
func exportDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.yaml"), []byte(exportTools), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// get answers a GET of the served program: status, body and the problem
// headers.
func get(t *testing.T, url string) (int, string, []string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header.Values(httpapi.ProblemHeader)
}

// TestListFormatMatchesREST holds `wield list --format` to the body of
// GET /v1/tools?format= for every format and selection, from the same tool
// files, both on the local registry and through --server.
func TestListFormatMatchesREST(t *testing.T) {
	dir := exportDir(t)
	tmp := t.TempDir()
	s := launchServe(t, []string{"serve", "--addr", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(tmp, "w.db"),
		"--tools", dir, "--keys", filepath.Join(tmp, "keys.json")})
	selections := []struct {
		flags []string
		query string
	}{
		{nil, ""},
		{[]string{"--toolset", "web"}, "&toolset=web"},
		{[]string{"--agent", "researcher"}, "&agent=researcher"},
	}
	for _, f := range httpapi.ExportFormats {
		for _, sel := range selections {
			name := f + strings.ReplaceAll(sel.query, "&", " ")
			t.Run(name, func(t *testing.T) {
				status, body, problems := get(t, s.url+"/v1/tools?format="+f+sel.query)
				if status != 200 {
					t.Fatalf("GET: %d %s", status, body)
				}
				args := append([]string{"--tools", dir, "list", "--format", f}, sel.flags...)
				code, out, errOut := run(t, args...)
				if code != 0 {
					t.Fatalf("list: exit %d: %s", code, errOut)
				}
				if diff := cmp.Diff(body, out); diff != "" {
					t.Errorf("list --format %s differs from GET /v1/tools (-GET +list):\n%s", f, diff)
				}
				code, remote, remoteErr := run(t, append([]string{"--server", s.url}, args[2:]...)...)
				if code != 0 {
					t.Fatalf("list --server: exit %d: %s", code, remoteErr)
				}
				if diff := cmp.Diff(body, remote); diff != "" {
					t.Errorf("list --server --format %s differs from GET /v1/tools (-GET +list):\n%s", f, diff)
				}
				// The same warnings, one per problem header, in both modes.
				if got := strings.Count(warnings(errOut), "\n"); got != len(problems) {
					t.Errorf("local stderr has %d warnings, the answer %d problems:\n%s", got, len(problems), errOut)
				}
				if diff := cmp.Diff(warnings(errOut), warnings(remoteErr)); diff != "" {
					t.Errorf("warnings differ (-local +server):\n%s", diff)
				}
				if strings.Contains(out, `\u003c`) || strings.Contains(out, `\u0026`) {
					t.Errorf("the document is HTML-escaped:\n%s", out)
				}
			})
		}
	}
}

// warnings are the lines of stderr that report the export's problems.
func warnings(stderr string) string {
	var b strings.Builder
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "warning: ") && strings.Contains(line, ": tool ") && !strings.Contains(line, ".yaml:") {
			b.WriteString(line)
		}
	}
	return b.String()
}

func TestListFormatDocuments(t *testing.T) {
	dir := exportDir(t)
	tests := []struct {
		format   string
		contains []string
		absent   []string
	}{
		{"openai", []string{`"type": "function"`, `"name": "compare"`, `"Say whether a < b && b > c"`, `"the <left> side & more"`}, []string{`\u003c`}},
		{"gemini", []string{`"functionDeclarations"`}, nil},
		{"xml", []string{"<tool_call>", "<![CDATA[", "Say whether a < b && b > c", "\n### web_search\nDescription: Search the web for information using Bocha AI search engine\nParameters:\n" +
			"  - query: string (required) - Search query using keywords.\n" +
			"  - freshness: string (optional) - Time range filter: 'noLimit', 'oneDay', ...\n    Default: noLimit\n" +
			"  - count: integer (optional) - Number of results to return (1-50)\n    Default: 10\n" +
			"Example:\n<tool_call>\n  <name>web_search</name>\n  <params>\n    <query><![CDATA[your_query_here]]></query>\n" +
			"    <freshness><![CDATA[noLimit]]></freshness>\n    <count><![CDATA[10]]></count>\n  </params>\n</tool_call>\n"}, []string{"&lt;", "&amp;", `\u003c`}},
		{"json-prompt", []string{`"name": "web_search"`, "the <left> side & more"}, []string{`\u003c`, `\u0026`}},
	}
	for _, tc := range tests {
		code, out, errOut := run(t, "--tools", dir, "list", "--format", tc.format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.format, code, errOut)
		}
		for _, want := range tc.contains {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", tc.format, want, out)
			}
		}
		for _, bad := range tc.absent {
			if strings.Contains(out, bad) {
				t.Errorf("%s holds %q:\n%s", tc.format, bad, out)
			}
		}
	}
	// Gemini refuses http_get's free-form headers: a warning, exit 0, and
	// the document without it.
	code, out, errOut := run(t, "--tools", dir, "list", "--format", "gemini", "--toolset", "web")
	if code != 0 || !strings.Contains(errOut, `warning: gemini: tool "http_get"`) || strings.Contains(out, "http_get") || !strings.Contains(out, "web_search") {
		t.Errorf("gemini of toolset web: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestListFormatUsageErrors(t *testing.T) {
	dir := exportDir(t)
	tmp := t.TempDir()
	s := launchServe(t, []string{"serve", "--addr", "127.0.0.1:0", "--db", "sqlite:" + filepath.Join(tmp, "w.db"),
		"--tools", dir, "--keys", filepath.Join(tmp, "keys.json")})
	formats := "the formats are openai, openai-strict, responses, responses-strict, anthropic, anthropic-strict, gemini, gemini-json-schema, mcp, xml, json-prompt"
	tests := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"unknown format", []string{"list", "--format", "cobol"}, []string{`unknown format "cobol"`, formats}},
		{"json is not a format", []string{"list", "--format", "json"}, []string{formats, "use --json"}},
		{"json and format", []string{"list", "--json", "--format", "openai"}, []string{"--json and --format exclude each other"}},
		{"unknown toolset", []string{"list", "--format", "openai", "--toolset", "nope"}, []string{`unknown toolset "nope": the toolsets are web`}},
		{"unknown agent", []string{"list", "--format", "anthropic", "--agent", "nope"}, []string{`unknown agent "nope": the agents are researcher`}},
		{"unknown toolset without format", []string{"list", "--toolset", "nope"}, []string{`unknown toolset "nope": the toolsets are web`}},
	}
	for _, tc := range tests {
		for _, mode := range []string{"local", "server"} {
			args := append([]string{"--tools", dir}, tc.args...)
			if mode == "server" {
				args = append([]string{"--server", s.url}, tc.args...)
			}
			code, out, errOut := run(t, args...)
			if code != 2 || out != "" {
				t.Errorf("%s (%s): exit %d, stdout %q; want 2 and nothing", tc.name, mode, code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(errOut, want) {
					t.Errorf("%s (%s): stderr lacks %q:\n%s", tc.name, mode, want, errOut)
				}
			}
		}
	}
	// No agents at all says so.
	if code, _, errOut := run(t, "list", "--agent", "nope"); code != 2 || !strings.Contains(errOut, `unknown agent "nope": there are no agents`) {
		t.Errorf("no agents: exit %d: %s", code, errOut)
	}
}

// TestListDescriptionClipsOnCharacter lists a tool whose description is
// longer than the table's 80 bytes and made of "é"s (2 bytes each): the
// column ends at the last whole "é" within 79 bytes, with "…". The cut used
// to fall inside an "é", which the table showed as \xc3.
func TestListDescriptionClipsOnCharacter(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := "name: accents\ndescription: " + strings.Repeat("é", 50) + "\nentry: {type: builtin, handler: echo}\n"
	if err := os.WriteFile(filepath.Join(dir, "tools.yaml"), []byte(tool), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, "--tools", dir, "list")
	if code != 0 {
		t.Fatalf("list: exit %d\n%s%s", code, out, errs)
	}
	line := lineWith(out, "accents")
	if want := strings.Repeat("é", 39) + "…"; !utf8.ValidString(line) || strings.Contains(line, `\x`) || !strings.HasSuffix(line, want) {
		t.Errorf("list: the line of the tool does not end with %q (valid UTF-8: %v):\n%s", want, utf8.ValidString(line), out)
	}
}
