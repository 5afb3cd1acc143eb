//go:build unix

package journeys

import (
	"fmt"
	"strings"
	"testing"
)

// TestJourneySearchActionClasses: with more than 40 tools, `wield call
// search_tools` finds a tool by the everyday words of its name's action or
// object, which its definition does not use ("scrap" a delete tool, "50
// bucks" a payout), and a brand the request names ("in Zulip") ranks its
// domain's tool above another domain's that shares the generic words.
func TestJourneySearchActionClasses(t *testing.T) {
	u := newUser(t)
	var b strings.Builder
	b.WriteString("kind: tools\ntools:\n")
	add := func(name, desc string) {
		fmt.Fprintf(&b, "  - name: %s\n    description: %s\n    parameters: [{name: message, type: string}]\n    entry: {type: builtin, handler: echo}\n", name, desc)
	}
	for i := range 45 {
		add(fmt.Sprintf("crm_record_%02d", i), fmt.Sprintf("Update customer record field number %d in the CRM.", i))
	}
	add("widgets_delete_widget", "Delete a widget by its id.")
	add("widgets_create_widget", "Create a widget with a name.")
	add("bank_send_payout", "Send a payout to a recipient.")
	add("chat_send_message", "Send a message to a person.")
	add("zulip_post_message", "Post a message to a Zulip stream.")
	add("pager_send_channel_message", "Send a message to a channel of the pager.")
	u.write("tools/kit.yaml", b.String())

	type found struct {
		OK     bool `json:"ok"`
		Output struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"output"`
	}
	for _, tt := range []struct{ query, want string }{
		{"scrap that widget", "widgets_delete_widget"},
		{"send Luis 50 bucks", "bank_send_payout"},
		{"ping the ops channel in Zulip that the release slipped", "zulip_post_message"},
	} {
		r := u.must("call", "search_tools", "--tools", "tools", "query="+tt.query)
		var got found
		r.json(t, &got)
		if !got.OK || len(got.Output.Tools) == 0 || got.Output.Tools[0].Name != tt.want {
			t.Errorf("search_tools %q: want %s first:\n%s", tt.query, tt.want, r)
		}
	}
}
