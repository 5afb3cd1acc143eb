//go:build unix

package journeys

import (
	"fmt"
	"strings"
	"testing"
)

// TestJourneySearchEverydayWords: with more than 40 tools, `wield call
// search_tools` finds a tool from an everyday word its definition does not
// use: "mend" reaches a restore tool through WordNet, and "took" is "take"
// (an irregular verb made regular), and the search is recorded.
func TestJourneySearchEverydayWords(t *testing.T) {
	u := newUser(t)
	var b strings.Builder
	b.WriteString("kind: tools\ntools:\n")
	for i := range 45 {
		fmt.Fprintf(&b, "  - name: crm_record_%02d\n    description: Update customer record field number %d in the CRM.\n    parameters: [{name: message, type: string}]\n    entry: {type: builtin, handler: echo}\n", i, i)
	}
	b.WriteString("  - name: restore_backup\n    description: Restore the database from its latest backup.\n    parameters: [{name: message, type: string}]\n    entry: {type: builtin, handler: echo}\n")
	b.WriteString("  - name: take_snapshot\n    description: Take a snapshot of a disk.\n    parameters: [{name: message, type: string}]\n    entry: {type: builtin, handler: echo}\n")
	u.write("tools/crm.yaml", b.String())

	type found struct {
		OK     bool `json:"ok"`
		Output struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"output"`
	}
	for _, tt := range []struct{ query, want string }{
		{"mend it", "restore_backup"},
		{"the one I took", "take_snapshot"},
	} {
		r := u.must("call", "search_tools", "--tools", "tools", "--conversation", "j1", "query="+tt.query)
		var got found
		r.json(t, &got)
		if !got.OK || len(got.Output.Tools) == 0 || got.Output.Tools[0].Name != tt.want {
			t.Errorf("search_tools %q: want %s first:\n%s", tt.query, tt.want, r)
		}
	}
	rec := u.must("calls", "--conversation", "j1", "--json")
	var page struct {
		Records []struct {
			Call struct {
				Tool string `json:"tool"`
			} `json:"call"`
		} `json:"records"`
	}
	rec.json(t, &page)
	searches := 0
	for _, r := range page.Records {
		if r.Call.Tool == "search_tools" {
			searches++
		}
	}
	if searches != 2 || len(page.Records) != 2 {
		t.Errorf("want the 2 searches recorded under j1, found %d of %d records:\n%s", searches, len(page.Records), rec.stdout)
	}
}
