package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/memstore"
)

// newEngine returns an engine over tools, or over builtin.Defaults() when
// none are given.
func newEngine(t *testing.T, tools ...*wield.Tool) *engine.Engine {
	t.Helper()
	if len(tools) == 0 {
		tools = builtin.Defaults()
	}
	reg := wield.NewRegistry(nil)
	reg.MustRegister(tools...)
	e := engine.New(reg, nil)
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func call(t *testing.T, e *engine.Engine, tool, args string) *wield.Result {
	t.Helper()
	res, err := e.Call(context.Background(), wield.Call{Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCalculator(t *testing.T) {
	e := newEngine(t)
	tests := []struct {
		expr    string
		want    float64
		errType wield.ErrorType
		errText string
	}{
		{"1+2", 3, "", ""},
		{"2 * (3 + 4)", 14, "", ""},
		{"2^10", 1024, "", ""},
		{"2**0.5 * 2**0.5", 2.0000000000000004, "", ""},
		{"sqrt(16) + pow(2, 3)", 12, "", ""},
		{"max(1, 7, 3) - min(4, 2)", 5, "", ""},
		{"abs(-3) + floor(2.7) + ceil(2.1) + round(2.5)", 11, "", ""},
		{"7 % 3", 1, "", ""},
		{"10 / 4", 2.5, "", ""},
		{"hypot(3, 4) + log10(1000) + log2(8) + ln(e)", 12, "", ""},
		{"sin(0) + cos(0) + atan2(0, 1)", 1, "", ""},
		{"pi > 3", 0, wield.ErrValidation, "comparison"},
		{"1/0", 0, wield.ErrExecution, "not a finite number"},
		{"1 +", 0, wield.ErrValidation, "cannot evaluate"},
		{`"a" + "b"`, 0, wield.ErrValidation, `unexpected character '"' at position 1`},
		{"len([1,2,3])", 0, wield.ErrValidation, "cannot evaluate"},
		// expr's extras (ranges, arrays, sum, map) are not the calculator's language
		{"map(1..1000000, # * 2)", 0, wield.ErrValidation, `unknown function "map" at position 1`},
		{"sum(1..100000000)", 0, wield.ErrValidation, `unknown function "sum" at position 1`},
		{"-2**2 + 2^3^2 + 0x10 + 1_000 + .5", 1524.5, "", ""},
		{"9223372036854775807 + 1", -9223372036854775808, "", ""},
		{"1 < 2 < 3", 0, wield.ErrValidation, "comparison, not arithmetic: it gave true"},
		{"2 * (3 + ", 0, wield.ErrValidation, "found end of the expression at position 10"},
		{"7.5 % 2", 0, wield.ErrValidation, "% takes integers"},
		{"5 % 0", 0, wield.ErrValidation, "integer division by zero in % at position 3"},
		{"5 % max(0, 0)", 0, wield.ErrExecution, "integer division by zero in % at position 3"},
		{"sqrt(-1)", 0, wield.ErrExecution, "not a finite number"},
		{"pow(2)", 0, wield.ErrValidation, "pow takes 2 arguments, got 1 at position 1"},
		{"2 # 3", 0, wield.ErrValidation, "unexpected character '#' at position 3"},
		{strings.Repeat("1", 1001), 0, wield.ErrValidation, "at most 1000"},
		{"env", 0, wield.ErrValidation, "cannot evaluate"},
		{"sqrt('x')", 0, wield.ErrValidation, "cannot evaluate"},
		{strings.Repeat("1+", 400) + "1", 0, wield.ErrValidation, "cannot evaluate"},
	}
	for _, tt := range tests {
		args, _ := json.Marshal(map[string]string{"expression": tt.expr})
		res := call(t, e, "calculator", string(args))
		if tt.errType != "" {
			if res.OK || res.ErrorType != tt.errType || !strings.Contains(res.Error, tt.errText) {
				t.Errorf("%s: got ok=%v %s %q, want %s containing %q", tt.expr, res.OK, res.ErrorType, res.Error, tt.errType, tt.errText)
			}
			continue
		}
		var out builtin.CalculatorOutput
		if !res.OK || json.Unmarshal(res.Output, &out) != nil || out.Result != tt.want {
			t.Errorf("%s = %s (%s %s), want %v", tt.expr, res.Output, res.ErrorType, res.Error, tt.want)
		}
	}
}

func TestEcho(t *testing.T) {
	e := newEngine(t)
	res := call(t, e, "echo", `{"message":"héllo <&>"}`)
	if !res.OK || string(res.Output) != `{"message":"héllo <&>"}` {
		t.Errorf("got %s %s", res.Output, res.Error)
	}
}

func TestCurrentTime(t *testing.T) {
	e := newEngine(t)
	before := time.Now().UnixMilli()
	for _, tt := range []struct{ args, zone string }{{`{}`, "UTC"}, {`{"timezone":"Asia/Tokyo"}`, "Asia/Tokyo"}} {
		res := call(t, e, "current_time", tt.args)
		var out builtin.CurrentTimeOutput
		if !res.OK || json.Unmarshal(res.Output, &out) != nil {
			t.Fatalf("%s: %s %s", tt.args, res.Output, res.Error)
		}
		iso, err := time.Parse(time.RFC3339Nano, out.ISO)
		if out.Timezone != tt.zone || out.Timestamp < before || err != nil || iso.UnixMilli() != out.Timestamp {
			t.Errorf("%s: %+v (%v)", tt.args, out, err)
		}
	}
	for _, zone := range []string{"Mars/Base", "Local", "../../etc/passwd"} {
		args, _ := json.Marshal(map[string]string{"timezone": zone})
		if res := call(t, e, "current_time", string(args)); res.OK || res.ErrorType != wield.ErrValidation {
			t.Errorf("%s: got %s %s", zone, res.Output, res.ErrorType)
		}
	}
}

func TestDefaultsDescribed(t *testing.T) {
	for _, tl := range builtin.Defaults() {
		if tl.Category == "" || tl.Description == "" || tl.Version == "" || !tl.Annotations.ReadOnly || tl.Timeout == 0 && tl.Name != "echo" {
			t.Errorf("%s: category %q, annotations %+v, timeout %s", tl.Name, tl.Category, tl.Annotations, tl.Timeout)
		}
	}
}

func TestAll(t *testing.T) {
	names := func(tools []*wield.Tool) []string {
		var out []string
		for _, tl := range tools {
			out = append(out, tl.Name)
		}
		return out
	}
	base := []string{"echo", "calculator", "current_time", "sleep", "get_env", "set_env", "json_parse", "json_stringify",
		"base64_encode", "base64_decode", "http_get", "http_post", "http_request", "web_fetch"}
	tools, err := builtin.All(builtin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(base, names(tools)); diff != "" {
		t.Errorf("zero options (-want +got):\n%s", diff)
	}
	full, err := builtin.All(builtin.Options{
		Files:     builtin.FileOptions{AllowedPaths: []string{t.TempDir()}},
		Search:    builtin.SearchOptions{Provider: "duckduckgo"},
		Artifacts: memstore.NewArtifacts(),
		Agents:    func() []string { return []string{"a"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]string{}, base...), "read_file", "write_file", "list_files", "delete_file", "move_file", "get_file_info",
		"web_search", "create_artifact", "read_artifact", "update_artifact", "rewrite_artifact", "call_subagent")
	if diff := cmp.Diff(want, names(full)); diff != "" {
		t.Errorf("full options (-want +got):\n%s", diff)
	}
	// Every built-in is documented and described as DESIGN.md asks.
	reg := wield.NewRegistry(nil)
	if err := reg.Register(full...); err != nil {
		t.Fatal(err)
	}
	for _, tl := range full {
		if tl.Category == "" || tl.Description == "" || tl.Version == "" || tl.Source != "builtin" || (tl.Timeout == 0 && !tl.Inline) {
			t.Errorf("%s: category %q, version %q, source %q, timeout %s", tl.Name, tl.Category, tl.Version, tl.Source, tl.Timeout)
		}
		if tl.Annotations.ReadOnly && tl.Annotations.Destructive {
			t.Errorf("%s is both read-only and destructive", tl.Name)
		}
	}
	perm := map[string]wield.Permission{}
	for _, tl := range full {
		perm[tl.Name] = tl.EffectivePermission()
	}
	for _, n := range []string{"set_env", "delete_file", "move_file"} {
		if perm[n] != wield.PermissionConfirm {
			t.Errorf("%s: permission %s, want confirm", n, perm[n])
		}
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []builtin.Options{
		{Files: builtin.FileOptions{AllowedPaths: []string{notDir}}}, // a folder that does not exist yet is no error

		{Search: builtin.SearchOptions{Provider: "altavista"}},
		{Search: builtin.SearchOptions{Provider: "brave"}},
	} {
		if _, err := builtin.All(bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
