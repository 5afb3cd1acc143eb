package toolfile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/builtin"
	"github.com/wieldhq/wield/engine"
	"github.com/wieldhq/wield/toolfile"
)

func ExampleLoader_LoadDirs() {
	l := toolfile.Loader{Builtins: toolfile.HandlersOf(builtin.Defaults()...)}
	set, err := l.LoadDirs(context.Background(), "../examples/tools")
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := wield.NewRegistry(nil)
	if err := set.Apply(reg); err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range reg.List(wield.Query{}) {
		fmt.Println(t.Name, t.Category, t.Source)
	}
	kit, _ := reg.Toolkit("helper")
	fmt.Println("helper:", kit.Names())

	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	res, _ := e.Call(context.Background(), wield.Call{Tool: "say", Arguments: json.RawMessage(`{"message":"hi"}`)})
	fmt.Println(res.OK, string(res.Output))
	// Output:
	// say custom ../examples/tools/say.json:2
	// utc_date system ../examples/tools/utc_date.yaml:3
	// word_count file ../examples/tools/word_count.yaml:3
	// helper: [utc_date word_count say]
	// true {"message":"hi"}
}

func ExampleLint() {
	dir, _ := os.MkdirTemp("", "lint")
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/t.yaml", []byte("name: t\nentry: {type: builtin, handler: x}\nparameters:\n  - name: n\n    type: integer\n    validation: {min: ten}\n"), 0o644)
	for _, p := range toolfile.Lint(dir) {
		fmt.Println(strings.TrimPrefix(p.String(), dir+"/"))
	}
	// Output:
	// t.yaml:6:23: parameter "n": min: expected a number, got string
}

func TestExamplesRun(t *testing.T) {
	l := toolfile.Loader{Builtins: toolfile.HandlersOf(builtin.Defaults()...)}
	if ps := l.Lint("../examples/tools"); len(ps) > 0 {
		t.Fatalf("examples have problems: %v", ps)
	}
	set, err := l.LoadDirs(context.Background(), "../examples/tools")
	if err != nil {
		t.Fatal(err)
	}
	reg := wield.NewRegistry(&wield.RegistryOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := set.Apply(reg); err != nil {
		t.Fatal(err)
	}
	e := engine.New(reg, nil)
	defer e.Close(context.Background())
	ctx := context.Background()

	res, err := e.Call(ctx, wield.Call{Tool: "word_count", Arguments: json.RawMessage(`{"paths":["testdata/lint/a_ok.yaml"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK || !strings.Contains(string(res.Output), "testdata/lint/a_ok.yaml") {
		t.Errorf("word_count = %+v", res)
	}
	res, _ = e.Call(ctx, wield.Call{Tool: "word_count", Arguments: json.RawMessage(`{"paths":["no/such/file"]}`)})
	if res.OK || res.ErrorType != wield.ErrExecution || !strings.Contains(res.Error, "wc exited with status 1") {
		t.Errorf("missing file: %+v", res)
	}
	res, _ = e.Call(ctx, wield.Call{Tool: "utc_date", Arguments: json.RawMessage(`{"format":"%Y"}`)})
	if !res.OK || !strings.Contains(string(res.Output), `"exit_code":0`) {
		t.Errorf("utc_date = %+v", res)
	}
	// A builtin the loader was not given still registers and answers
	// executor_not_found.
	var bare toolfile.Loader
	set, _ = bare.LoadDirs(ctx, "../examples/tools/say.json")
	reg2 := wield.NewRegistry(nil)
	if err := set.Apply(reg2); err != nil {
		t.Fatal(err)
	}
	e2 := engine.New(reg2, nil)
	defer e2.Close(ctx)
	res, _ = e2.Call(ctx, wield.Call{Tool: "say", Arguments: json.RawMessage(`{"message":"hi"}`)})
	if res.ErrorType != wield.ErrExecutorNotFound {
		t.Errorf("say without builtins = %+v", res)
	}
}

// A toolset naming a tool that the registry does not hold is not defined:
// Apply's error locates each such name, and is a wield.ErrNotFound.
func ExampleUndefinedError() {
	var l toolfile.Loader
	set, _ := l.Load(context.Background(), "tools/ts.yaml", []byte("kind: toolset\nname: ts\ntools:\n  - lookup\n"))
	err := set.Apply(wield.NewRegistry(nil))
	var u *toolfile.UndefinedError
	if errors.As(err, &u) {
		for _, p := range u.Problems {
			fmt.Println(p)
		}
	}
	fmt.Println(errors.Is(err, wield.ErrNotFound))
	// Output:
	// tools/ts.yaml:4:5: toolset "ts": tool "lookup" is not defined
	// true
}
