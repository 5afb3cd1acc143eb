package wield_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// TestUpdateRemoveTools: the batch forms act as Update and Remove one by
// one would: order and counters kept, unknown names reported, defaults
// restored, one event per tool.
func TestUpdateRemoveTools(t *testing.T) {
	bus := wield.NewBus(64)
	reg := wield.NewRegistry(&wield.RegistryOptions{Bus: bus})
	reg.MustRegister(tool("a", wield.CategoryFile, "v1"), tool("b", wield.CategoryFile, "v1"), tool("c", wield.CategoryFile, "v1"))
	if err := reg.RegisterDefaults(tool("d", wield.CategoryData, "builtin")); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register(tool("d", wield.CategoryData, "file")); err != nil {
		t.Fatal(err)
	}
	reg.Entry("c").Observe(true, 2*time.Millisecond)
	sub := bus.Subscribe(nil)
	defer sub.Close()

	a2, c2 := tool("a", wield.CategoryData, "v2"), tool("c", wield.CategoryData, "v2")
	err := reg.UpdateTools(c2, tool("ghost", "", ""), a2)
	if !errors.Is(err, wield.ErrNotFound) {
		t.Errorf("UpdateTools with ghost = %v, want ErrNotFound", err)
	}
	if got, _ := reg.Tool("a"); got != a2 {
		t.Error("a is not updated")
	}
	if got := reg.Stats().Calls["c"].Count; got != 1 {
		t.Errorf("c's calls after UpdateTools: %d, want 1", got)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, names(reg.List(wield.Query{}))); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if n := reg.RemoveTools("a", "ghost", "c", "a", "d"); n != 3 {
		t.Errorf("RemoveTools = %d, want 3 (a, c, and d given back to its default)", n)
	}
	if diff := cmp.Diff([]string{"b", "d"}, names(reg.List(wield.Query{}))); diff != "" {
		t.Errorf("after RemoveTools (-want +got):\n%s", diff)
	}
	if d, _ := reg.Tool("d"); d == nil || d.Source != "builtin" {
		t.Errorf("d after RemoveTools is %+v, want the default back", d)
	}
	var got []string
	for _, ev := range drain(t, sub) {
		got = append(got, string(ev.Type)+" "+ev.Tool)
	}
	want := []string{"tool_updated c", "tool_updated a", "tool_removed a", "tool_removed c", "tool_updated d"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
