package toolfile

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// TestApplyUndefinedLocated: what Apply cannot define is an
// *UndefinedError located at each name the registry does not hold (not at
// the document's first line), worded as the load's warning, and still a
// wield.ErrNotFound.
func TestApplyUndefinedLocated(t *testing.T) {
	var l Loader
	set, err := l.Load(context.Background(), "tools/ts.yaml",
		[]byte("kind: toolset\nname: ts\ntools: [a, x]\n---\nname: a\ndescription: A\nentry: {type: command, command: [\"true\"]}\n---\nkind: agent\nname: ag\ntools: [y]\ntool_sets: [ts]\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = set.Apply(wield.NewRegistry(nil))
	var u *UndefinedError
	if !errors.As(err, &u) || !errors.Is(err, wield.ErrNotFound) {
		t.Fatalf("Apply = %v (%T), want an *UndefinedError wrapping ErrNotFound", err, err)
	}
	want := Problems{
		{File: "tools/ts.yaml", Line: 3, Col: 12, Message: `toolset "ts": tool "x" is not defined`},
		{File: "tools/ts.yaml", Line: 11, Col: 9, Message: `agent "ag": tool "y" is not defined`},
		{File: "tools/ts.yaml", Line: 12, Col: 13, Message: `agent "ag": toolset "ts" is not defined`},
	}
	if diff := cmp.Diff(want, u.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
