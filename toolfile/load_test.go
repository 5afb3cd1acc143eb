package toolfile

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestHTTPRequestGolden(t *testing.T) {
	l := Loader{Builtins: map[string]wield.Handler{"http_request": wield.HandlerFunc(nil)}}
	set, err := l.LoadDirs(context.Background(), "testdata/http_request.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Problems) != 0 {
		t.Fatalf("problems: %v", set.Problems)
	}
	if len(set.Tools) != 1 {
		t.Fatalf("got %d tools, want 1", len(set.Tools))
	}
	tool := set.Tools[0]
	got, err := json.MarshalIndent(map[string]any{
		"name": tool.Name, "version": tool.Version, "description": tool.Description,
		"category": tool.Category, "tags": tool.Tags, "source": tool.Source,
		"input_schema": tool.InputSchema, "output_schema": tool.OutputSchema,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "http_request.schema.json", append(got, '\n'))
	order := []string{"url", "method", "headers", "body", "timeout"}
	if diff := cmp.Diff(order, tool.InputSchema.PropertyOrder); diff != "" {
		t.Errorf("property order (-want +got):\n%s", diff)
	}
}

func TestDataAnalysisSet(t *testing.T) {
	set, err := LoadDirs("testdata/data_analysis")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range set.Problems {
		t.Errorf("problem: %v", p)
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	ts, ok := reg.Toolset("data_analysis_set")
	if !ok {
		t.Fatal("toolset not defined")
	}
	want := wield.Toolset{Name: "data_analysis_set", Description: "数据分析工具集", Tools: []string{"sql_tool", "excel_tool", "plot_tool"}}
	if diff := cmp.Diff(want, ts); diff != "" {
		t.Errorf("toolset (-want +got):\n%s", diff)
	}
	kit, ok := reg.Toolkit("analyst")
	if !ok {
		t.Fatal("no toolkit for analyst")
	}
	if diff := cmp.Diff([]string{"sql_tool", "excel_tool", "plot_tool"}, kit.Names()); diff != "" {
		t.Errorf("toolkit (-want +got):\n%s", diff)
	}
	wantAgent := OutputStrategy{FunctionCalling: true, FallbackToStructuredOutput: true, PromptFormat: "xml"}
	if diff := cmp.Diff(wantAgent, set.Agents[0].OutputStrategy); diff != "" {
		t.Errorf("output strategy (-want +got):\n%s", diff)
	}
	sql, _ := reg.Tool("sql_tool")
	if diff := cmp.Diff([]string{"query"}, sql.InputSchema.Required); diff != "" {
		t.Errorf("sql_tool required (-want +got):\n%s", diff)
	}
	if sql.Source != filepath.Join("testdata", "data_analysis", "tools", "sql_tool.yaml")+":1" {
		t.Errorf("source = %q", sql.Source)
	}
}

func TestDuplicatesShadowed(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		os.WriteFile(filepath.Join(dir, d, "echo.yaml"), []byte("name: echo\ndescription: from "+d+"\nentry: {type: builtin, handler: echo}\n"), 0o644)
	}
	set, err := LoadDirs(filepath.Join(dir, "b"), filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	// A duplicate is a warning (at load, naming both files), not an error.
	if err := set.Apply(reg); err != nil {
		t.Fatalf("Apply = %v, want nil", err)
	}
	tool, _ := reg.Tool("echo")
	if tool.Description != "from b" {
		t.Errorf("winner = %q, want the first directory's", tool.Description)
	}
	if got := len(reg.Shadowed()["echo"]); got != 1 {
		t.Errorf("%d shadowed, want 1", got)
	}
	if len(set.Problems) != 2 {
		t.Errorf("problems = %v, want a warning at each place", set.Problems)
	}
}

func TestFormats(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"single", "name: a\nentry: {type: builtin, handler: x}\n", []string{"a"}},
		{"list", "tools:\n  - name: a\n    entry: {type: builtin, handler: x}\n  - name: b\n    entry: {type: builtin, handler: x}\n", []string{"a", "b"}},
		{"stream", "name: a\nentry: {type: builtin, handler: x}\n---\nname: b\nentry: {type: builtin, handler: x}\n", []string{"a", "b"}},
		{"json", `{"name": "a", "entry": {"type": "builtin", "handler": "x"}}`, []string{"a"}},
		{"json with tabs", "{\n\t\"name\": \"a\",\n\t\"entry\": {\"type\": \"builtin\", \"handler\": \"x\"}\n}\n", []string{"a"}},
		{"json list", `[{"name": "a", "entry": {"type": "builtin", "handler": "x"}}]`, []string{"a"}},
		{"explicit kind", "kind: tool\nname: a\ntools: [x]\nentry: {type: builtin, handler: x}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Loader
			set, err := l.Load(context.Background(), "f.yaml", []byte(tt.src))
			var got []string
			for _, tool := range set.Tools {
				got = append(got, tool.Name)
			}
			if tt.want == nil {
				if err == nil {
					t.Errorf("no error for %q", tt.src)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzLoad(f *testing.F) {
	for _, name := range []string{"testdata/http_request.yaml", "testdata/data_analysis/tools/plot_tool.json", "testdata/data_analysis/agent.yaml"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("tools:\n  - name: a\n    entry: {type: command, command: [echo, '{x}']}\n    parameters: [{name: x, type: string}]\n"))
	f.Add([]byte("name: s\ndescription: d\napi_url: https://a.example/x\nauth_method: API Key\napi_key_env: K\n"))
	f.Add([]byte("name: m\ndescription: d\nmcp_server_url: http://127.0.0.1:3001/mcp\nmcp_api_key: k\n"))
	f.Add([]byte("name: f\nparameters: [{name: e, type: string, validation: {format: email}}]\nentry: {type: builtin, handler: h}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		l := Loader{MCPServerURLs: map[string]string{"http://127.0.0.1:3001/mcp": "fs"}}
		set, err := l.Load(context.Background(), "fuzz.yaml", src)
		if set == nil {
			t.Fatal("nil set")
		}
		if err == nil {
			for _, tool := range set.Tools {
				if tool.InputSchema == nil {
					t.Fatal("tool without schema")
				}
			}
		}
	})
}

func TestTooDeep(t *testing.T) {
	tests := []struct {
		name, src string
		want      string
	}{
		{"brackets", "name: a\ndefault: " + strings.Repeat("[", 100) + strings.Repeat("]", 100), "f.yaml:2:74: nesting deeper than 64 levels"},
		{"dashes", strings.Repeat("- ", 100) + "x", "f.yaml:1:129: nesting deeper than 64 levels"},
		{"large", strings.Repeat("#", MaxFileSize+1), "f.yaml:1:1: file is larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Loader
			set, _ := l.Load(context.Background(), "f.yaml", []byte(tt.src))
			if len(set.Problems) != 1 || set.Problems[0].String() != tt.want {
				t.Errorf("problems = %v, want %s", set.Problems, tt.want)
			}
		})
	}
}

// TestLoadDirsMissingFolder: a tool folder the configuration names before it
// exists is a warning, not an error, and the other folders still load.
func TestLoadDirsMissingFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "say.yaml"), []byte("name: say\ndescription: Say it\nparameters: [{name: message, type: string}]\nentry: {type: builtin, handler: echo}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "tools", "native")
	set, err := LoadDirs(missing, dir)
	if err != nil {
		t.Fatalf("a missing folder is an error: %v", err)
	}
	if len(set.Tools) != 1 || set.Tools[0].Name != "say" {
		t.Errorf("tools %v, want say from the folder that exists", set.Tools)
	}
	if len(set.Problems) != 1 || !set.Problems[0].Warning || set.Problems[0].File != missing || !strings.Contains(set.Problems[0].Message, "does not exist (yet)") {
		t.Errorf("problems %v, want one warning naming %s", set.Problems, missing)
	}
}
