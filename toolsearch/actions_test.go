package toolsearch

import (
	"slices"
	"strings"
	"testing"

	"github.com/wieldhq/wield"
)

// TestNameActions: a tool is found by the everyday words of its name's
// action and object, which its description does not use, whatever the
// tool: the classes are keyed by name words, not by tools.
func TestNameActions(t *testing.T) {
	tools := []*wield.Tool{
		tool("widgets_delete_widget", "Delete a widget by id."),
		tool("widgets_create_widget", "Create a widget with a name."),
		tool("widgets_get_widget", "Get a widget by id."),
		tool("vault_put_blob", "Write a blob to a vault."),
		tool("vault_list_blobs", "List the blobs of a vault."),
		tool("bank_send_payout", "Send a payout to a recipient."),
		tool("chat_send_message", "Send a message to a person."),
		tool("fleet_reboot_node", "Reboot a node of the fleet."),
		tool("fleet_list_nodes", "List the nodes of the fleet."),
	}
	ix := New(tools)
	for _, tt := range []struct{ query, want string }{
		{"scrap that widget", "widgets_delete_widget"},
		{"whip up a widget", "widgets_create_widget"},
		{"stash this blob in the vault", "vault_put_blob"},
		{"send Luis 50 bucks", "bank_send_payout"},
		{"the node is frozen", "fleet_reboot_node"},
	} {
		if got := names(ix.Search(tt.query, 1)); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("Search(%q) = %v, want %s first", tt.query, got, tt.want)
		}
	}
	// Without a word of the classes, the expansion adds nothing.
	if got := ix.Count("widget"); got != 3 {
		t.Errorf("Count(widget) = %d, want the 3 widget tools", got)
	}
}

// TestDomainBoost: a brand a request names ranks its domain's tools above
// another domain's tool that matches a generic word better; an everyday
// word that is also a domain's name is no brand.
func TestDomainBoost(t *testing.T) {
	tools := []*wield.Tool{
		tool("zulip_post_message", "Post a message to a Zulip stream.", "zulip", "chat"),
		tool("zulip_list_streams", "List the streams of a Zulip organization.", "zulip", "chat"),
		tool("pager_send_channel_message", "Send a message to a channel of the pager.", "paging"),
		tool("time_current_time", "Current time in a time zone.", "time"),
		tool("cal_create_event", "Create an event at a time.", "calendar"),
		tool("cal_list_events", "List events between a start time and an end time.", "calendar"),
		tool("jobs_run_at_time", "Run a job at a given time.", "jobs"),
	}
	ix := New(tools)
	if got := names(ix.Search("ping the ops channel in Zulip that the release slipped", 1)); !slices.Equal(got, []string{"zulip_post_message"}) {
		t.Errorf("Zulip request: got %v, want zulip_post_message first", got)
	}
	if _, ok := ix.brands["zulip"]; !ok {
		t.Errorf("zulip is not a brand: %v", ix.brands)
	}
	if gs, ok := ix.brands["time"]; ok {
		t.Errorf("time, an everyday word used by other domains' tools, is a brand of %v", gs)
	}
}

// TestDescribedVerb: a verb in the past after a subject pronoun describes
// the request's object ("the message I posted") and weighs less than the
// verb that asks ("remove").
func TestDescribedVerb(t *testing.T) {
	ix := New([]*wield.Tool{
		tool("chat_post_message", "Post a message to a channel."),
		tool("chat_delete_message", "Delete a message from a channel."),
		tool("chat_get_thread", "Get the replies of a thread."),
	})
	if got := names(ix.Search("remove the message I posted by mistake", 1)); !slices.Equal(got, []string{"chat_delete_message"}) {
		t.Errorf("got %v, want chat_delete_message first", got)
	}
	if got := names(ix.Search("could you post the message in the channel", 1)); !slices.Equal(got, []string{"chat_post_message"}) {
		t.Errorf("got %v, want chat_post_message first: after you, the verb is the request", got)
	}
}

// TestLeadWord: a request's first meaningful word, most often an
// imperative's verb, weighs more than the same word later.
func TestLeadWord(t *testing.T) {
	ix := New([]*wield.Tool{
		tool("box_archive_item", "Archive an item of a box."),
		tool("box_post_item", "Post an item to a box."),
	})
	for _, tt := range []struct{ query, want string }{
		{"archive the item, then post it", "box_archive_item"},
		{"post the item, then archive it", "box_post_item"},
	} {
		if got := names(ix.Search(tt.query, 1)); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("Search(%q) = %v, want %s first", tt.query, got, tt.want)
		}
	}
}

// TestNameTermsWords: every everyday word of the classes is a search term
// (not a stop word, which a query never keeps), and every class has words.
func TestNameTermsWords(t *testing.T) {
	for k, v := range nameTerms {
		if strings.TrimSpace(v) == "" {
			t.Errorf("class %q has no words", k)
		}
		for _, w := range strings.Fields(v) {
			if n := len(terms(w)); n != 1 {
				t.Errorf("class %q: word %q makes %d terms, want 1", k, w, n)
			}
		}
	}
}
