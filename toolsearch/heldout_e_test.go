package toolsearch

import (
	"fmt"
	"os"
	"testing"
)

// colloquialE is the fifth held-out set: 15 requests of the three
// colloquial kinds (five each), written and committed before any change
// to the ranking it measures and before it was run. The ranking is tuned
// on the other sets only; this one is run once, at the end, and its figure
// is reported whatever it is. That is why TestRelevanceHeldOutE skips
// unless WIELD_HELDOUT_E=1: nobody runs it by accident while tuning.
//
// It was run once, at commit c5e167c (the WordNet table, irregular verbs,
// separable phrasal verbs and the widened hand-written table in place):
// right tool in top 3 for 8 of 15 as shipped; 7 plain, 7 with the
// hand-written table alone, 7 with WordNet's alone; the ranking before
// this work, run in the same go test, 7. The misses have been seen since,
// so a later figure on this set is no measure either.
var colloquialE = []request{
	// everyday verbs and idioms
	{"scrap my 3pm sync tomorrow, it's not happening anymore", []string{"gcal_delete_event"}},
	{"stash the signed contract in our S3 bucket for legal", []string{"aws_s3_put_object"}},
	{"dig up the Slack thread where we argued about the pricing change", []string{"slack_search_messages"}},
	{"hop on a call with Sam in ten minutes, send me a Zoom link", []string{"zoom_create_meeting"}},
	{"drop a marker on the Grafana graphs where we shipped 3.2", []string{"grafana_create_annotation"}},
	// a symptom instead of the remedy
	{"the redis box is eating all the RAM, what's going on in there", []string{"redis_info"}},
	{"the nodes are maxed out, which pods are hogging them", []string{"k8s_top_pods"}},
	{"I'm off all next week, make Gmail tell people who write to me", []string{"gmail_set_vacation_responder"}},
	{"the Lambda still behaves like before my fix, get my new version up there", []string{"aws_lambda_update_code"}},
	{"the monthly report query in postgres takes minutes, why is it so slow", []string{"postgres_explain_query"}},
	// a generic word shared with another domain's tool
	{"ping the team channel in Microsoft Teams that the release slipped a day", []string{"teams_send_channel_message"}},
	{"send Luis 50 bucks for the concert tickets", []string{"paypal_send_payout"}},
	{"what branch am I on, and did I forget to commit anything", []string{"git_status"}},
	{"look up the record for example.org's mail server", []string{"netutil_dns_lookup", "cloudflare_list_dns_records"}},
	{"run the numbers on these test scores: the average and how spread out they are", []string{"math_statistics"}},
}

// TestRelevanceHeldOutE reports the fifth held-out set's top-3 figure with
// each layer of query expansion (see layers), the last being the ranking
// as shipped. It has no bar: the set is run once, after the tuning, to
// measure it.
func TestRelevanceHeldOutE(t *testing.T) {
	if os.Getenv("WIELD_HELDOUT_E") != "1" {
		t.Skip("set WIELD_HELDOUT_E=1 to run the held-out set E (run once, after tuning)")
	}
	if len(colloquialE) != 15 {
		t.Fatalf("%d requests in set E, want 15", len(colloquialE))
	}
	for _, l := range layers {
		hits := rankRequestsWith(t, colloquialE, l.setup)
		fmt.Printf("toolsearch: held-out set E, %s: right tool in top 3 for %d of %d\n", l.name, hits, len(colloquialE))
	}
}
