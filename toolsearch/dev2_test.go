package toolsearch

import (
	"fmt"
	"testing"
)

// devSecond is a second development set of the three colloquial kinds
// (ten each), written and committed after the class and brand layers and
// before the ranking was run on it: its first figure measures how those
// layers generalize; it is tuned on after that first run.
var devSecond = []request{
	// everyday verbs and idioms
	{"blast out a tweet that the sale starts now", []string{"twitter_post_tweet"}},
	{"knock out the 'update deps' task in Todoist, it's done", []string{"todoist_close_task"}},
	{"track down the invoice we sent Globex in March on Stripe", []string{"stripe_list_invoices"}},
	{"put together a new Notion page for the offsite agenda", []string{"notion_create_page"}},
	{"slap the urgent label on that email from the bank in Gmail", []string{"gmail_modify_labels"}},
	{"fire up the staging VM on Azure", []string{"azure_start_vm"}},
	{"take the old nginx container down, we don't need it", []string{"docker_stop_container", "docker_remove_container"}},
	{"grab me yesterday's orders from the shop", []string{"shopify_list_orders"}},
	{"pop the new logo into Dropbox", []string{"dropbox_upload"}},
	{"jump on a quick call with the Berlin folks on Teams at 4", []string{"teams_create_meeting"}},
	// a symptom instead of the remedy
	{"our postgres reports have been crawling since Monday, what's eating the time", []string{"postgres_list_slow_queries", "postgres_explain_query"}},
	{"the payments pod keeps getting OOM killed", []string{"k8s_describe_pod", "k8s_get_events", "k8s_top_pods", "k8s_get_pod_logs"}},
	{"the web server on EC2 isn't answering anymore, turn it off and on", []string{"aws_ec2_reboot_instances"}},
	{"my Mac's disk is full of docker images I never use", []string{"docker_prune_system", "docker_remove_image"}},
	{"the cluster is running hot, which pods eat the most CPU", []string{"k8s_top_pods"}},
	{"the nightly GitLab pipeline died halfway, give it another go", []string{"gitlab_retry_pipeline"}},
	{"every few runs the login test fails in CircleCI for no reason", []string{"circleci_find_flaky_tests"}},
	{"I'll be hiking with no signal all of next week, Gmail should answer for me", []string{"gmail_set_vacation_responder"}},
	{"users say the site is down, is it even up", []string{"netutil_ping", "web_check_url_status"}},
	{"the deploy of v2.3 on Argo made everything worse, go back to what we had", []string{"argocd_rollback_application"}},
	// a generic word shared with another domain's tool
	{"record a new CNAME for docs.example.com in Cloudflare", []string{"cloudflare_create_dns_record"}},
	{"send $30 to Mia on PayPal for dinner", []string{"paypal_send_payout"}},
	{"what's the status of my flight LH400", []string{"travel_flight_status"}},
	{"post the release notes in the #launch channel on Discord", []string{"discord_send_message"}},
	{"open a ticket in Zendesk for the broken checkout", []string{"zendesk_create_ticket"}},
	{"share the Q4 folder in Drive with Lena", []string{"gdrive_share_file"}},
	{"stop the music on Spotify", []string{"spotify_pause"}},
	{"schedule a message in Slack to go out Monday 9am", []string{"slack_schedule_message"}},
	{"check the health of the Elasticsearch cluster", []string{"elasticsearch_cluster_health"}},
	{"publish a message on the events topic in GCP", []string{"gcp_pubsub_publish"}},
}

// devHard is a third development set, 20 requests written, after
// devSecond proved too easy (28 of 30 before the layers and after), to
// share as few words as possible with the right tool's definition, as set
// E did; committed before the ranking was run on it.
var devHard = []request{
	{"get rid of the meeting with the vendor on Friday, they bailed", []string{"gcal_delete_event"}},
	{"put the slide deck somewhere the whole company can grab it on Dropbox", []string{"dropbox_create_shared_link"}},
	{"the blog takes forever to come up for readers in Asia, how do the numbers look on Datadog", []string{"datadog_query_metrics"}},
	{"hush the alert for the nightly backup job in Datadog, it's known", []string{"datadog_mute_monitor"}},
	{"someone needs to be woken up, the checkout is throwing 500s", []string{"pagerduty_trigger_incident"}},
	{"say this paragraph out loud in a British voice", []string{"audio_text_to_speech"}},
	{"is my Friday afternoon open for a coffee with Jen and Ole", []string{"gcal_find_free_slots"}},
	{"who's behind the Acme account in Salesforce", []string{"salesforce_get_account"}},
	{"the Redis instance is eating memory, how big is it now", []string{"redis_info"}},
	{"boot the troll from our Discord server", []string{"discord_ban_member"}},
	{"I need a new spot to keep the team's notes in Notion", []string{"notion_create_page", "notion_create_database"}},
	{"the message I sent in #general has a typo, fix it", []string{"slack_update_message"}},
	{"pay back the customer who got charged twice through PayPal", []string{"paypal_refund_capture"}},
	{"make the photo of my dog look like a van Gogh painting", []string{"image_edit_image"}},
	{"crunch the mean and median of these delivery times", []string{"math_statistics"}},
	{"ring Grandma's landline through Twilio and play a message", []string{"twilio_make_call"}},
	{"something in prod is spitting out errors since the release, what does Sentry see", []string{"sentry_list_issues"}},
	{"we're low on oat milk in the shop, bump the count by 20", []string{"shopify_update_inventory"}},
	{"the email I drafted to the landlord, fire it off", []string{"gmail_send_email"}},
	{"the padlock on vpn.example.com looks off, when does it lapse", []string{"netutil_check_ssl_certificate"}},
}

// devFresh is a fourth development set, 20 hard requests of the three
// kinds, written and committed after the layers' second round of general
// entries and before the ranking was run on it.
var devFresh = []request{
	{"nix the all-hands invite for Thursday, it moved online anyway", []string{"gcal_delete_event"}},
	{"chuck a copy of the logs into the backups bucket on S3", []string{"aws_s3_put_object"}},
	{"rummage through my inbox for the lease agreement the agent sent", []string{"gmail_search_emails"}},
	{"set up a video chat with the new hire for Monday morning on Zoom", []string{"zoom_create_meeting"}},
	{"throw together a Datadog board with the checkout latency", []string{"datadog_create_dashboard"}},
	{"the Jenkins job has been chugging along for hours, is it still alive", []string{"jenkins_get_build_status"}},
	{"ever since the last update the mobile API returns garbage, undo it in kubernetes", []string{"k8s_rollout_undo"}},
	{"the docker box ran out of disk again", []string{"docker_prune_system"}},
	{"the Raspberry Pi at 192.168.1.20 stopped responding to anything, is it alive", []string{"netutil_ping"}},
	{"Spotify is blasting way too loud", []string{"spotify_set_volume"}},
	{"half the team can't open the spreadsheet I put in Drive", []string{"gdrive_list_permissions", "gdrive_share_file"}},
	{"my MongoDB collection has thousands of junk test documents, clear them out", []string{"mongodb_delete_many"}},
	{"tell the folks in the #support Slack room that chat is back up", []string{"slack_post_message"}},
	{"move 300 euros to the contractor through PayPal", []string{"paypal_send_payout"}},
	{"what's an Apple share going for right now", []string{"finance_stock_quote"}},
	{"where in the world does the IP 8.8.8.8 sit", []string{"netutil_ip_geolocation"}},
	{"note on the Linear issue that QA passed", []string{"linear_add_comment"}},
	{"line up the new Radiohead single to play next", []string{"spotify_add_to_queue"}},
	{"the weekly numbers sheet needs last Friday's row", []string{"gsheets_append_rows"}},
	{"count signups per day in BigQuery", []string{"bigquery_run_query"}},
}

// devLast is a fifth development set, 15 requests like set E's (five of
// each kind), written and committed after the class weight was chosen and
// before the ranking was run on it; its first run is reported in the
// README as the last measure before the lead's held-out set.
var devLast = []request{
	{"bin the message I posted by mistake in the Slack thread", []string{"slack_delete_message"}},
	{"squeeze the screen recording down so it fits in an email", []string{"video_compress_video"}},
	{"pull the signed NDA down from Google Drive", []string{"gdrive_download_file"}},
	{"rope Kenji into the #infra channel", []string{"slack_invite_to_channel"}},
	{"mark the checkout incident as sorted in PagerDuty", []string{"pagerduty_resolve_incident"}},
	{"Postgres is chewing through CPU on that report query, why", []string{"postgres_explain_query"}},
	{"the staging site still shows yesterday's build after the deploy, it sits behind Cloudflare", []string{"cloudflare_purge_cache"}},
	{"my k8s nodes are packed, which pods are greedy", []string{"k8s_top_pods"}},
	{"the Friday GitHub Actions run has been spinning for three hours", []string{"ghactions_cancel_workflow_run", "ghactions_get_workflow_run"}},
	{"the photo's too grainy to print big", []string{"image_upscale_image"}},
	{"record a CNAME for shop.example.com in Route 53", []string{"aws_route53_change_record"}},
	{"put 25 dollars on Lena's PayPal for the gift", []string{"paypal_send_payout"}},
	{"post the meeting notes to the Confluence space", []string{"confluence_create_page"}},
	{"drop the old_logs table in sqlite", []string{"sqlite_query"}},
	{"follow @nasa on X", []string{"twitter_follow_user"}},
}

// devFinal is a sixth set, 15 requests like set E's, written and
// committed after the last change to the ranking and run once; it was not
// tuned on, so its figure is this work's last own measure of how it
// generalizes (the held-out set is the lead's).
var devFinal = []request{
	{"zap the duplicate Jira ticket ABC-77", []string{"jira_delete_issue"}},
	{"shove the quarterly numbers into a new tab of the budget sheet", []string{"gsheets_add_sheet"}},
	{"swap out the channel blurb in #random for 'pizza friday'", []string{"slack_set_channel_topic"}},
	{"rustle up the last ten commits on main in our GitHub repo", []string{"github_list_commits"}},
	{"get the intro of the podcast cut off", []string{"audio_trim_audio"}},
	{"the API container is hogging the laptop, how bad is it", []string{"docker_container_stats"}},
	{"people keep getting the old favicon on our Cloudflare site", []string{"cloudflare_purge_cache"}},
	{"the payments Lambda can't keep up and times out, what do its numbers look like in CloudWatch", []string{"aws_cloudwatch_get_metric", "aws_cloudwatch_query_logs"}},
	{"searching the Mongo orders collection takes forever", []string{"mongodb_create_index"}},
	{"who's holding the pager tonight", []string{"pagerduty_who_is_on_call"}},
	{"play back the recording of Monday's Zoom call", []string{"zoom_list_recordings"}},
	{"find us a place to stay in Porto for the weekend", []string{"travel_search_hotels"}},
	{"tag the v2.0 release on GitHub", []string{"github_create_release"}},
	{"send the invoice to Acme on Stripe", []string{"stripe_finalize_invoice", "stripe_create_invoice"}},
	{"post to LinkedIn that we're hiring", []string{"linkedin_create_post"}},
}

// devClosing is a seventh set, 15 requests like set E's, written and
// committed after the last change to the ranking and run once; it is not
// tuned on.
var devClosing = []request{
	{"fish out last month's AWS bill breakdown", []string{"aws_cost_explorer_get_costs"}},
	{"knock up a quick Google Doc for the retro notes", []string{"gdocs_create_document"}},
	{"bump Priya up to moderator on our Discord", []string{"discord_add_role"}},
	{"stick the screenshot on the Jira ticket WEB-88", []string{"jira_add_attachment"}},
	{"shelve the #launch-2023 channel on Slack, it's dead", []string{"slack_archive_channel"}},
	{"my Gmail inbox is drowning in promo mail from one store", []string{"gmail_create_filter"}},
	{"the new hire can't see the onboarding folder in Drive", []string{"gdrive_share_file", "gdrive_list_permissions"}},
	{"the mobile app crashes on launch since 4.2, what has Sentry got", []string{"sentry_list_issues"}},
	{"the build box keeps running out of space from old images", []string{"docker_prune_system", "docker_remove_image"}},
	{"the weekly digest email went out twice, did the scheduled job run twice in Jenkins", []string{"jenkins_get_build_status", "jenkins_get_console_output", "jenkins_list_jobs"}},
	{"message the ops group on WhatsApp that the server's back", []string{"twilio_send_whatsapp"}},
	{"log two hours on PROJ-9 in Jira", []string{"jira_log_work"}},
	{"pull the latest from the Notion roadmap page", []string{"notion_get_page"}},
	{"check out order 1043 in Shopify", []string{"shopify_get_order"}},
	{"drop the price of the blue mug to $12 in Stripe", []string{"stripe_create_price"}},
}

// TestRelevanceDevSecond prints the second to seventh development sets'
// top-3 figures with each layer of query expansion (see layers).
func TestRelevanceDevSecond(t *testing.T) {
	for _, l := range layers {
		hits := rankRequestsWith(t, devSecond, l.setup)
		hard := rankRequestsWith(t, devHard, l.setup)
		fresh := rankRequestsWith(t, devFresh, l.setup)
		last := rankRequestsWith(t, devLast, l.setup)
		final := rankRequestsWith(t, devFinal, l.setup)
		closing := rankRequestsWith(t, devClosing, l.setup)
		fmt.Printf("toolsearch: second dev set, %s: right tool in top 3 for %d of %d; hard set: %d of %d; fresh set: %d of %d; last set: %d of %d; final set: %d of %d; closing set: %d of %d\n", l.name, hits, len(devSecond), hard, len(devHard), fresh, len(devFresh), last, len(devLast), final, len(devFinal), closing, len(devClosing))
		if l.setup == nil { // the shipped ranking
			relevanceBar(t, "devSecond, devHard, devFresh, devLast, devFinal and devClosing", hits+hard+fresh+last+final+closing, 28+18+20+15+12+12)
		}
	}
}
