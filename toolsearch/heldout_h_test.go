package toolsearch

import "testing"

// colloquialH is the eighth held-out set: 15 requests of the three colloquial
// kinds, five each, written and committed before it was run by a session that
// saw neither the ranking code nor its tables nor any set's results; its tools
// are none that an earlier set asks for; to be run once, its figure reported
// whatever it is. TestRelevanceHeldOutH skips unless WIELD_HELDOUT_H=1.
//
// It was run once, on 2026-11-28 at commit 28d29ee (the ranking of sets F and
// G, unchanged since): right tool in top 3 for 7 of 15 as shipped; 6 plain, 6
// with the hand-written table alone, 7 with WordNet's alone. Its misses have
// been seen since.
var colloquialH = []request{
	// everyday verbs and idioms
	{"wake the two build boxes i-0a1b2c3d4e5f60718 and i-0f9e8d7c6b5a43210 back up, they've been off since Friday", []string{"aws_ec2_start_instances"}},
	{"lock in what I've staged so far with the note \"fix rounding in invoice totals\"", []string{"git_commit"}},
	{"tack \"blocked on VPN access, ask Raj\" onto the bottom of notes/standup.md", []string{"fs_append_file"}},
	{"turn down Priya's invite for the Thursday 3pm design review, I'll be on a plane", []string{"gcal_respond_to_event"}},
	{"shut down everything I brought up from ~/src/shop/docker-compose.yml and clear it all away, I'm done for the day", []string{"docker_compose_down"}},
	// a symptom instead of the remedy
	{"saving to reports/2026/q4/summary.csv keeps failing with \"no such file or directory\", reports/ is there but nothing under it is", []string{"fs_create_directory"}},
	{"the upload form won't take my logo.webp, it says PNG or JPG only", []string{"image_convert_image_format"}},
	{"the customer on order #1042 changed her mind before we shipped anything, she wants her money back and the items should count as in stock again", []string{"shopify_cancel_order"}},
	{"this settings file won't load, it just says unexpected token near the end: {\"port\": 8080, \"hosts\": [\"a\", \"b\",], }", []string{"text_json_format"}},
	{"merged the image bump into the deploy repo an hour ago but Argo still has payments running v1.4.2", []string{"argocd_sync_application"}},
	// a generic word shared with another domain's tool
	{"run a pipeline on the orders collection: group by customer_id, sum the totals, give me the top 10", []string{"mongodb_aggregate"}},
	{"put this into the products index: {\"sku\": \"TR-88\", \"name\": \"trail shoe\", \"price\": 89}", []string{"elasticsearch_index_document"}},
	{"what has the Veritasium channel put out in the last couple of weeks?", []string{"youtube_list_channel_videos"}},
	{"pull NVDA's daily closes for the last six months", []string{"finance_stock_history"}},
	{"Dana Whitfield at Brightline Labs just signed, convert her from a lead into a proper customer record", []string{"salesforce_convert_lead"}},
}

// TestRelevanceHeldOutH runs set H as TestRelevanceHeldOutF runs F (see
// runHeldOut). It has no bar: it is run once and its figure is reported as it
// is, whatever it is.
func TestRelevanceHeldOutH(t *testing.T) { runHeldOut(t, "H", colloquialH) }
