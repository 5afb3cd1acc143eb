package toolsearch

import "testing"

// colloquialG is the seventh held-out set: 15 requests of the three
// colloquial kinds (five each), worded as people type to an agent. It was
// written and committed before it was run, by a session that saw neither
// the ranking code nor its tables (nor the other sets' results), and it is
// to be run once, at the end, its figure reported whatever it is. Its tools
// are none of set E's or set F's. That is why TestRelevanceHeldOutG skips
// unless WIELD_HELDOUT_G=1: nobody runs it by accident while tuning.
//
// It was run once, on 2026-11-27 at commit a0eb5ee (after the leave-one-set-out
// round, which changed no seen figure): right tool in top 3 for 12 of 15 as
// shipped, and 12 with every layer (plain, either table, both). The same
// ranking scored 8 on set F, so the two figures differ by their sets, not by
// the ranking; its misses have been seen since.
var colloquialG = []request{
	// everyday verbs and idioms
	{"kick off the nightly-release job in Jenkins again with VERSION=2.4.1", []string{"jenkins_build_job"}},
	{"shush the disk-space alert in Datadog until Monday morning, we already know about it", []string{"datadog_mute_monitor"}},
	{"tick off 'renew passport' in Todoist, finally done", []string{"todoist_close_task"}},
	{"jot down on Acme Corp's record in HubSpot that they want a demo in March", []string{"hubspot_create_note"}},
	{"fire up my Discover Weekly on Spotify", []string{"spotify_play"}},
	// a symptom instead of the remedy
	{"we swapped the logo on the site an hour ago but everyone still sees the old one; it's all behind Cloudflare", []string{"cloudflare_purge_cache"}},
	{"Chrome says the connection to shop.example.com isn't private since this morning", []string{"netutil_check_ssl_certificate"}},
	{"these listing photos are 12 MB each and the marketplace keeps rejecting the upload", []string{"image_compress_image"}},
	{"my Gmail inbox is drowning in automated emails from Jenkins, I never want to see them there again", []string{"gmail_create_filter"}},
	{"we've been sitting at gate B12 for an hour and nobody's saying anything, what's going on with UA 936?", []string{"travel_flight_status"}},
	// a generic word shared with another domain's tool
	{"add a new tab called Q4 to the budget spreadsheet", []string{"gsheets_add_sheet"}},
	{"pull the postgres:16 image onto this machine so I can test the upgrade", []string{"docker_pull_image"}},
	{"who's on call for payments tonight? I need to escalate something", []string{"pagerduty_who_is_on_call"}},
	{"convert 350 Fahrenheit to Celsius, this oven recipe is American", []string{"math_convert_units"}},
	{"cut the first 30 seconds of dead air off episode12.mp3", []string{"audio_trim_audio"}},
}

// TestRelevanceHeldOutG runs set G as TestRelevanceHeldOutF runs F (see
// runHeldOut). It has no bar: the set is run once, after the tuning, to
// measure it.
func TestRelevanceHeldOutG(t *testing.T) {
	runHeldOut(t, "G", colloquialG)
}
