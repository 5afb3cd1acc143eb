package toolsearch

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// request is something a user asks, with the tools that would serve it.
type request struct {
	query string
	want  []string
}

// requests are what a user might ask an agent, worded as a person would
// rather than as the tools describe themselves, with the tools that would
// serve them. Where two tools would do, both are accepted; the domain
// ("in Jira", "on Slack") is named only where a person would name it.
var requests = []request{
	{"open a bug in our Jira project about the login page crashing", []string{"jira_create_issue"}},
	{"what's the weather going to be like in Lisbon this weekend", []string{"weather_forecast"}},
	{"text +15551234567 that I'm running ten minutes late", []string{"twilio_send_sms"}},
	{"show me the last 100 lines the api pod printed before it crashed", []string{"k8s_get_pod_logs"}},
	{"how do I get from the airport to my hotel by train", []string{"maps_directions"}},
	{"put this quarterly report into our Google Drive", []string{"gdrive_upload_file"}},
	{"the customer was billed twice on Stripe, give them their money back", []string{"stripe_create_refund"}},
	{"turn this paragraph into Spanish", []string{"translate_translate_text"}},
	{"what is 15% of 240", []string{"math_percentage", "math_calculate"}},
	{"how many miles is 42 kilometers", []string{"math_convert_units"}},
	{"let the #engineering channel on Slack know the deploy is done", []string{"slack_post_message"}},
	{"find a slot next week when Ana, Bo and I are all available for an hour", []string{"gcal_find_free_slots"}},
	{"squash and merge PR 42 on GitHub", []string{"github_merge_pull_request"}},
	{"spin up an nginx container listening on port 8080", []string{"docker_run_container"}},
	{"the web deployment needs 5 replicas instead of 2", []string{"k8s_scale_deployment"}},
	{"copy out the words written in this scanned receipt photo", []string{"image_ocr_image"}},
	{"make me a picture of a cat astronaut in watercolor", []string{"image_generate_image"}},
	{"write out everything that was said in this interview recording", []string{"audio_transcribe_audio"}},
	{"who is on call for the payments service right now", []string{"pagerduty_who_is_on_call"}},
	{"which tables exist in our postgres database", []string{"postgres_list_tables"}},
	{"how much did we spend on AWS last month", []string{"aws_cost_explorer_get_costs"}},
	{"bounce all the pods of the checkout deployment", []string{"k8s_rollout_restart", "k8s_delete_pod"}},
	{"is the https certificate of example.com about to expire", []string{"netutil_check_ssl_certificate"}},
	{"how much is one bitcoin worth today", []string{"finance_crypto_price"}},
	{"find me a flight from Berlin to Tokyo on March 3", []string{"travel_search_flights"}},
	{"answer Maria's email and tell her Thursday works for me", []string{"gmail_reply_to_email"}},
	{"we don't use the old #random-2019 Slack channel anymore, archive it", []string{"slack_archive_channel"}},
	{"rerun the CI jobs that failed in my GitHub Actions run", []string{"ghactions_rerun_failed_jobs"}},
	{"grab the captions of this YouTube video so I can read it", []string{"youtube_get_transcript"}},
	{"remind me to call the dentist tomorrow at 5pm", []string{"todoist_add_task", "gcal_quick_add_event", "gcal_create_event"}},
}

// heldOut are requests written after the ranking was last changed and
// never used to change it: they measure how the search generalizes. The
// bar (10 of 15 in the top 3) was set before they were first run.
var heldOut = []request{
	{"delete the crashing pod in staging so it comes back", []string{"k8s_delete_pod"}},
	{"what's on my calendar tomorrow", []string{"gcal_list_events"}},
	{"save the PDF attached to this email to my computer", []string{"gmail_download_attachment"}},
	{"add Priya to the #design channel", []string{"slack_invite_to_channel"}},
	{"how many people visited our site through Cloudflare this week", []string{"cloudflare_get_analytics"}},
	{"stop the EC2 box i-0abc123", []string{"aws_ec2_stop_instances"}},
	{"show the columns of the users table in postgres", []string{"postgres_describe_table"}},
	{"silence the disk space alert in Datadog until tomorrow", []string{"datadog_mute_monitor"}},
	{"put a 20% off coupon SUMMER20 on the shop", []string{"shopify_create_discount_code"}},
	{"who changed line 40 of main.go last", []string{"git_blame"}},
	{"play some jazz on Spotify", []string{"spotify_play", "spotify_search"}},
	{"what's 250 dollars in euros", []string{"finance_convert_currency"}},
	{"check the open merge requests in our GitLab project", []string{"gitlab_list_merge_requests"}},
	{"make Zendesk ticket 4821 urgent and give it to me", []string{"zendesk_update_ticket"}},
	{"get the text out of this contract pdf", []string{"pdf_extract_text"}},
}

// TestRelevanceHeldOut is TestRelevance on requests the ranking was not
// developed on.
func TestRelevanceHeldOut(t *testing.T) {
	hits := rankRequests(t, heldOut)
	t.Logf("held out: right tool in top 3 for %d of %d requests", hits, len(heldOut))
	if hits < 10 {
		t.Errorf("held out: right tool in top 3 for %d of %d requests, want at least 10", hits, len(heldOut))
	}
}

// rankRequests logs the misses of reqs and returns how many have an
// acceptable tool in the top 3.
func rankRequests(t *testing.T, reqs []request) int {
	t.Helper()
	return rankRequestsWith(t, reqs, nil)
}

// rankRequestsWith is rankRequests with the index set up by setup (nil:
// as New makes it).
func rankRequestsWith(t *testing.T, reqs []request, setup func(*Index)) int {
	t.Helper()
	tools := loadCatalog(t)
	names := map[string]bool{}
	for _, tool := range tools {
		names[tool.Name] = true
	}
	ix := New(tools)
	if setup != nil {
		setup(ix)
	}
	hits := 0
	for _, r := range reqs {
		for _, w := range r.want {
			if !names[w] {
				t.Fatalf("request %q expects %s, which is not in the catalog", r.query, w)
			}
		}
		var ranked []string
		for _, h := range ix.Search(r.query, 3) {
			ranked = append(ranked, h.Tool.Name)
		}
		if slices.ContainsFunc(ranked, func(n string) bool { return slices.Contains(r.want, n) }) {
			hits++
		} else {
			t.Logf("MISS %q: want one of %v, got %s", r.query, r.want, strings.Join(ranked, ", "))
		}
	}
	return hits
}

// TestRelevance asks the 500-tool catalog the requests above and requires
// an acceptable tool in the top 3 for at least 27 of 30. Every miss is
// logged with what came first instead.
func TestRelevance(t *testing.T) {
	if len(requests) != 30 {
		t.Fatalf("%d requests, want 30", len(requests))
	}
	hits := rankRequests(t, requests)
	t.Logf("right tool in top 3 for %d of %d requests", hits, len(requests))
	if hits < 27 {
		t.Errorf("right tool in top 3 for %d of %d requests, want at least 27", hits, len(requests))
	}
}

// colloquial are requests phrased the way people talk rather than the way
// tools describe themselves: everyday verbs and idioms for technical
// actions ("shoot", "tick off", "blow up"), a symptom instead of its remedy
// ("visitors still see the old logo" for purging a cache), and a generic
// word that another domain's tool shares ("fixed", "clip", "count"). They
// were written and committed before the ranking was tuned for this kind of
// request, and are never used to tune it: tune on colloquialTuning. The
// bar, 11 of 15 in the top 3, was set before they were first run.
var colloquial = []request{
	// everyday verbs and idioms
	{"shoot Dave a quick private note on Slack", []string{"slack_send_direct_message"}},
	{"tick off 'buy milk' on my todo list", []string{"todoist_close_task", "asana_complete_task"}},
	{"get the word out on Twitter that v2 is live", []string{"twitter_post_tweet"}},
	{"blow up this tiny logo so it stays crisp on a poster", []string{"image_upscale_image"}},
	{"ditch the background behind me in this headshot", []string{"image_remove_background"}},
	// a symptom instead of the remedy
	{"visitors still see the old logo on our site after we replaced it", []string{"cloudflare_purge_cache"}},
	{"the app broke right after the last deploy, take it back to how it was", []string{"k8s_rollout_undo", "argocd_rollback_application"}},
	{"my disk is full of old docker junk", []string{"docker_prune_system"}},
	{"the api got slow, which database statements are dragging it down", []string{"postgres_list_slow_queries"}},
	{"tests pass and fail at random in CircleCI", []string{"circleci_find_flaky_tests"}},
	// a generic word shared with another domain's tool
	{"mark the outage as fixed", []string{"pagerduty_resolve_incident"}},
	{"clip the first 30 seconds off this podcast episode", []string{"audio_trim_audio"}},
	{"we got 40 more mugs in, bump the count in the shop", []string{"shopify_update_inventory"}},
	{"sign the new leads up for the onboarding emails", []string{"hubspot_enroll_in_sequence"}},
	{"strip the vocals out of this track", []string{"audio_separate_stems"}},
}

// colloquialTuning are requests of the same three kinds as colloquial,
// written at the same time, on which the related-term table and the
// weights may be tuned.
var colloquialTuning = []request{
	{"I'm on it, stop paging everyone about the outage", []string{"pagerduty_acknowledge_incident"}},
	{"keep a copy of the production database before the migration", []string{"postgres_backup_database"}},
	{"which song is this playing in the cafe", []string{"audio_identify_song"}},
	{"push the new frontend live on Cloud Run", []string{"gcp_cloud_run_deploy"}},
	{"what did google cloud cost us this month", []string{"gcp_billing_get_costs"}},
	{"knock this photo down to a size I can email", []string{"image_compress_image", "image_resize_image"}},
	{"the checkout pod keeps dying, what happened to it", []string{"k8s_describe_pod", "k8s_get_events", "k8s_get_pod_logs"}},
	{"the login page says the certificate isn't trusted", []string{"netutil_check_ssl_certificate"}},
	{"nobody can reach shop.example.com, does the name still point to our server", []string{"netutil_dns_lookup", "cloudflare_list_dns_records"}},
	{"swap the payments service over to the v2 image", []string{"k8s_set_image"}},
	{"throw the build logs of that failed run my way", []string{"ghactions_download_job_logs", "jenkins_get_console_output", "gitlab_get_job_log"}},
	{"someone's spamming the Discord, kick them out for good", []string{"discord_ban_member"}},
	{"jot down in HubSpot that Acme wants a demo", []string{"hubspot_create_note"}},
	{"the invoice for Acme is ready, lock it in so it can be sent", []string{"stripe_finalize_invoice"}},
	{"who owns this domain", []string{"netutil_whois"}},
}

// colloquialFresh is a second held-out set of the same three kinds,
// written and committed after the related-term table and before the
// ranking with it was first run on anything: colloquial's misses had been
// seen at the baseline, so this set was the cleaner measure of how the
// table generalizes: 8 of 15 with it and without it at that first run.
// Its misses were seen when the table was widened, so its figure since is
// no measure (see colloquialD). It has no bar of its own.
var colloquialFresh = []request{
	{"give the #general channel a heads-up that lunch is here", []string{"slack_post_message"}},
	{"make sure that announcement stays at the top of the channel", []string{"slack_pin_message"}},
	{"fire off a text to mom saying I landed", []string{"twilio_send_sms"}},
	{"cut the intro out of this video clip", []string{"video_trim_video"}},
	{"bring last week's deleted budget file back in Dropbox", []string{"dropbox_restore_file"}},
	{"park this card in the Done column on Trello", []string{"trello_move_card"}},
	{"people say the checkout page shows a scary security warning", []string{"netutil_check_ssl_certificate"}},
	{"the build has been running forever, make it stop", []string{"ghactions_cancel_workflow_run"}},
	{"the spreadsheet with the sales numbers is missing the last two weeks", []string{"gsheets_append_rows", "gsheets_write_range"}},
	{"I keep getting emails from that newsletter, make them skip my inbox", []string{"gmail_create_filter"}},
	{"some unknown number keeps calling me, who is it", []string{"twilio_lookup_phone_number"}},
	{"how are Apple shares doing today", []string{"finance_stock_quote"}},
	{"pull the latest nginx image", []string{"docker_pull_image"}},
	{"move the standup to 10am tomorrow", []string{"gcal_update_event"}},
	{"tell the customer on ticket 991 that it's fixed", []string{"zendesk_reply_to_ticket", "zendesk_update_ticket"}},
}

// colloquialLast is a third held-out set, written and committed before the
// ranking was run on it: 6 of 15 with the first table and without it at
// that first run. Its misses were seen when the table was widened, so its
// figure since is no measure (see colloquialD). It has no bar of its own.
var colloquialLast = []request{
	{"bin the draft email to the landlord", []string{"gmail_trash_email"}},
	{"throw a thumbs up on Priya's message in Slack", []string{"slack_add_reaction"}},
	{"what's the damage on our Stripe account right now", []string{"stripe_get_balance"}},
	{"put the intro video up on YouTube", []string{"youtube_upload_video"}},
	{"my kid's recital recording is way too big to send", []string{"video_compress_video"}},
	{"I can't make out what the guy in this clip says, put words at the bottom", []string{"video_generate_subtitles"}},
	{"the nightly job on Jenkins never started, get it going by hand", []string{"jenkins_build_job"}},
	{"we pay for AWS servers nobody uses, which ones are up", []string{"aws_ec2_describe_instances"}},
	{"Ana is out next week, hand her Jira tickets to Luis", []string{"jira_assign_issue"}},
	{"some links on our page are dead, which ones", []string{"web_check_url_status", "web_extract_links"}},
	{"how long is the drive from Porto to Lisbon", []string{"maps_directions", "maps_distance_matrix"}},
	{"is it going to pour in Berlin this afternoon", []string{"weather_hourly_forecast", "weather_forecast"}},
	{"get me the gist of the Wikipedia page on Rust", []string{"wikipedia_get_summary"}},
	{"turn it down a notch on Spotify", []string{"spotify_set_volume"}},
	{"which PRs are waiting on me in GitHub", []string{"github_list_pull_requests"}},
}

// colloquialD is a fourth held-out set, written and committed after the
// related-term table was widened (the misses of colloquialFresh and
// colloquialLast had been seen by then, so their figures rose) and before
// the ranking was run on it; nothing was changed after. It has no bar.
var colloquialD = []request{
	{"nuke the stopped containers and dangling images, my laptop is choking", []string{"docker_prune_system"}},
	{"someone fat-fingered the DNS for api.example.com, point it at 203.0.113.7", []string{"cloudflare_create_dns_record", "aws_route53_change_record"}},
	{"my calendar's a mess tomorrow, what have I got", []string{"gcal_list_events"}},
	{"loop Maria into the planning meeting on Thursday", []string{"gcal_update_event"}},
	{"the CFO wants last quarter's revenue numbers for ACME Corp", []string{"finance_company_financials"}},
	{"scribble a quick answer to Tom's email saying I'm in", []string{"gmail_reply_to_email"}},
	{"show me what blew up in Sentry overnight", []string{"sentry_list_issues"}},
	{"back out the bad release in Argo", []string{"argocd_rollback_application"}},
	{"buzz the on-call engineer, the database is on fire", []string{"pagerduty_trigger_incident"}},
	{"is my 6pm flight to Madrid running late", []string{"travel_flight_status"}},
	{"toss a comment on the Linear ticket that I'm blocked", []string{"linear_add_comment"}},
	{"crank the search service up to 8 replicas", []string{"k8s_scale_deployment"}},
	{"my recipe says 180 C, what's that for an American oven", []string{"math_convert_units"}},
	{"pipe the sales figures into a new Google sheet", []string{"gsheets_create_spreadsheet", "gsheets_write_range", "gsheets_append_rows"}},
	{"get eyes on the build that broke main in GitHub Actions", []string{"ghactions_get_workflow_run", "ghactions_list_workflow_runs", "ghactions_download_job_logs"}},
}

// TestRelevanceColloquialD reports the fourth held-out set's figure.
func TestRelevanceColloquialD(t *testing.T) {
	hits := rankRequests(t, colloquialD)
	fmt.Printf("toolsearch: fourth colloquial held-out set: right tool in top 3 for %d of %d\n", hits, len(colloquialD))
	relevanceBar(t, "colloquialD", hits, 14)
}

// relevanceBar fails when the shipped ranking finds fewer of a set tuned
// on (or seen) than it did when the bar was set: a regression bar, not a
// measure of how the ranking generalizes (the held-out sets are).
func relevanceBar(t *testing.T, set string, hits, want int) {
	t.Helper()
	if hits < want {
		t.Errorf("%s: right tool in top 3 for %d, want at least %d (a regression bar)", set, hits, want)
	}
}

// TestRelevanceColloquial is a regression bar on colloquial, which was
// held out once but whose misses have since been seen and tuned on: it
// requires the 13 of 15 the ranking reached, and is no measure of how it
// generalizes (set E in heldout_e_test.go is). It prints the figure, and
// the tuning set's.
func TestRelevanceColloquial(t *testing.T) {
	if len(colloquial) != 15 {
		t.Fatalf("%d colloquial requests, want 15", len(colloquial))
	}
	tuned := rankRequests(t, colloquialTuning)
	hits := rankRequests(t, colloquial)
	fmt.Printf("toolsearch: colloquial set (tuned on since): right tool in top 3 for %d of %d (tuning set: %d of %d)\n", hits, len(colloquial), tuned, len(colloquialTuning))
	if hits < 13 {
		t.Errorf("colloquial set: right tool in top 3 for %d of %d requests, want at least 13 (a regression bar, not a held-out measure)", hits, len(colloquial))
	}
}

// TestRelevanceColloquialLast reports the third held-out set's figure,
// with the related terms and without them.
func TestRelevanceColloquialLast(t *testing.T) {
	hits := rankRequests(t, colloquialLast)
	fmt.Printf("toolsearch: last colloquial held-out set: right tool in top 3 for %d of %d\n", hits, len(colloquialLast))
	relevanceBar(t, "colloquialLast", hits, 14)
}

// TestRelevanceColloquialFresh reports the second held-out set's figure.
func TestRelevanceColloquialFresh(t *testing.T) {
	hits := rankRequests(t, colloquialFresh)
	fmt.Printf("toolsearch: fresh colloquial held-out set: right tool in top 3 for %d of %d\n", hits, len(colloquialFresh))
	relevanceBar(t, "colloquialFresh", hits, 13)
}

// BenchmarkSearchColloquial asks the 500-tool catalog the colloquial
// requests with the related-term table and, as the reference, without it,
// the two searches of a query one after the other so that the load of a
// shared machine weighs on both alike. It reports each one's ns per
// search and their ratio; ns/op is the pair's.
func BenchmarkSearchColloquial(b *testing.B) {
	tools := loadCatalog(b)
	var queries []string
	for _, r := range append(append(slices.Clone(colloquial), colloquialTuning...), colloquialFresh...) {
		queries = append(queries, r.query)
	}
	related, plain := New(tools), New(tools)
	plain.plain = true
	var tRelated, tPlain time.Duration
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		q := queries[i%len(queries)]
		start := time.Now()
		plain.Search(q, 3)
		mid := time.Now()
		related.Search(q, 3)
		tRelated += time.Since(mid)
		tPlain += mid.Sub(start)
	}
	b.ReportMetric(float64(tPlain.Nanoseconds())/float64(b.N), "plain-ns/search")
	b.ReportMetric(float64(tRelated.Nanoseconds())/float64(b.N), "related-ns/search")
	b.ReportMetric(float64(tRelated)/float64(tPlain), "related/plain")
}

// layers are the ways of expanding a query that TestRelevanceLayers and
// TestRelevanceHeldOutE compare: none, each related-term table alone, both.
var layers = []struct {
	name  string
	setup func(*Index)
}{
	{"plain", func(ix *Index) { ix.plain = true }},
	{"hand-written table", func(ix *Index) { ix.table = buildRelated(relatedTerms(), nil) }},
	{"WordNet table", func(ix *Index) { ix.table = buildRelated(nil, wordnetTerms()) }},
	{"both", nil},
}

// TestRelevanceLayers prints, for each set the ranking may be tuned on,
// the top-3 figure of each layer. The hand-written table was written with
// these sets' misses seen; WordNet's was not written from them, so its
// gain over plain is the cleaner measure of the two.
func TestRelevanceLayers(t *testing.T) {
	sets := []struct {
		name string
		reqs []request
	}{
		{"requests", requests}, {"heldOut", heldOut}, {"colloquial", colloquial},
		{"colloquialTuning", colloquialTuning}, {"colloquialFresh", colloquialFresh},
		{"colloquialLast", colloquialLast}, {"colloquialD", colloquialD},
	}
	for _, l := range layers {
		var line []string
		total, n := 0, 0
		for _, s := range sets {
			hits := rankRequestsWith(t, s.reqs, l.setup)
			line = append(line, fmt.Sprintf("%s %d/%d", s.name, hits, len(s.reqs)))
			total, n = total+hits, n+len(s.reqs)
		}
		fmt.Printf("toolsearch: %s: %s; all %d/%d\n", l.name, strings.Join(line, ", "), total, n)
		if l.setup == nil { // the shipped ranking
			relevanceBar(t, "the tuned-on sets together", total, 113)
		}
	}
}
