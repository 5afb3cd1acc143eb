package toolsearch

import "testing"

// colloquialI is the ninth held-out set: 15 requests of the three colloquial
// kinds, five each, written and committed before it was run by a session that
// saw neither the ranking code nor its tables nor any set's results; its tools
// are none that an earlier set asks for; to be run once, its figure reported
// whatever it is. TestRelevanceHeldOutI skips unless WIELD_HELDOUT_I=1.
//
// It was run once, on 2026-11-28 at commit 1ce8a0a (the ranking of set H,
// unchanged since): right tool in top 3 for 7 of 15 as shipped, and 7 with
// each layer (plain, either table, both). Its misses have been seen since.
var colloquialI = []request{
	// everyday verbs and idioms
	{"hop into the checkout-7f9c4d-x2k pod in staging and run cat /etc/resolv.conf for me", []string{"k8s_exec_in_pod"}},
	{"bundle up everything in invoices/2026-10/ into one file I can send to the accountant", []string{"fs_zip_files"}},
	{"take down my post on X from this morning, id 1859203847561234432, it has the launch date wrong", []string{"twitter_delete_tweet"}},
	{"pull PROJ-412 and PROJ-415 into sprint 88, we've got room this week", []string{"jira_move_issues_to_sprint"}},
	{"sign cus_Q8x2LmN0 up for the $49 a month plan, that's price_1PXyZabc", []string{"stripe_create_subscription"}},
	// a symptom instead of the remedy
	{"I added ffmpeg to the Dockerfile in ./api but containers from web-api:dev still say \"ffmpeg: not found\"", []string{"docker_build_image"}},
	{"everyone who signed up with the SPRING24 promo still has plan \"trial\" in the users collection, they've paid and should be on \"pro\"", []string{"mongodb_update_many"}},
	{"I'm tired of putting the Monday 9:30 planning sync with Lea and Tom on my calendar by hand every week", []string{"gcal_create_recurring_event"}},
	{"we renamed the product from Orbit to Nimbus but the \"Customer Onboarding Guide\" Google Doc still says Orbit all over the place", []string{"gdocs_replace_text"}},
	{"the pricing page still shows last week's prices after the update, it's serving the stale price:all entry out of redis", []string{"redis_delete"}},
	// a generic word shared with another domain's tool
	{"what texts came in from +1 415 555 0142 since yesterday?", []string{"twilio_list_messages"}},
	{"what container images have I got on this machine and how much room is each one taking up?", []string{"docker_list_images"}},
	{"send \"reload\" on the config-updates channel in redis so the workers pick up the new settings", []string{"redis_publish"}},
	{"link Maria Gomez's contact to the Globex renewal deal in HubSpot", []string{"hubspot_associate_records"}},
	{"which posts in our Notion \"Content calendar\" database are still Draft and due before Friday?", []string{"notion_query_database"}},
}

// TestRelevanceHeldOutI runs set I as TestRelevanceHeldOutF runs F (see
// runHeldOut). It has no bar: it is run once and its figure is reported as it
// is, whatever it is.
func TestRelevanceHeldOutI(t *testing.T) { runHeldOut(t, "I", colloquialI) }
