package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/toolsearch"
)

// TestToolSearchesCallersToolkit: a call made within a toolkit searches
// that toolkit's tools, sees a tool the toolkit gains, and a call without
// one searches the whole index; the toolkits' indexes are bounded.
func TestToolSearchesCallersToolkit(t *testing.T) {
	reg := wield.NewRegistry(nil)
	reg.MustRegister(
		fixed("send_email", "Send an email message to a recipient."),
		fixed("email_digest", "Send a daily digest email of unread messages."),
		fixed("read_file", "Read a file from disk."),
	)
	search := toolsearch.Tool(toolsearch.Cache(func() []*wield.Tool { return reg.List(wield.Query{}) }), nil)
	kit, err := reg.CreateToolkit("reader", "read_file", "email_digest")
	if err != nil {
		t.Fatal(err)
	}
	names := func(ctx context.Context, query string) []string {
		t.Helper()
		out, err := search.Handler.Handle(ctx, json.RawMessage(fmt.Sprintf(`{"query":%q,"limit":5}`, query)))
		if err != nil {
			t.Fatal(err)
		}
		var found toolsearch.SearchOutput
		if err := json.Unmarshal(out, &found); err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, f := range found.Tools {
			ns = append(ns, f.Name)
		}
		return ns
	}
	inKit := wield.WithCall(context.Background(), &wield.Call{Tool: "search_tools", Toolkit: kit})
	if got := names(inKit, "send an email"); len(got) != 1 || got[0] != "email_digest" {
		t.Errorf("within the toolkit: %v, want email_digest alone", got)
	}
	if got := names(context.Background(), "send an email"); len(got) != 2 || got[0] != "send_email" {
		t.Errorf("without a toolkit: %v, want send_email first, then email_digest", got)
	}
	if err := kit.Add("send_email"); err != nil {
		t.Fatal(err)
	}
	if got := names(inKit, "send an email"); len(got) != 2 || got[0] != "send_email" {
		t.Errorf("after the toolkit gained send_email: %v", got)
	}
	// Many toolkits, one after the other: each is searched on its own.
	for i := range 100 {
		k, err := reg.CreateToolkit(fmt.Sprintf("a%d", i), "read_file")
		if err != nil {
			t.Fatal(err)
		}
		if got := names(wield.WithCall(context.Background(), &wield.Call{Toolkit: k}), "read a file"); len(got) != 1 || got[0] != "read_file" {
			t.Fatalf("toolkit %d: %v", i, got)
		}
	}
}
