package toolsearch

import (
	"fmt"
	"testing"
)

// The development sets of the action-class, domain and symptom work:
// 45 requests of the three colloquial kinds (15 each), written and
// committed before that work changed the ranking and before the ranking
// was run on them. The ranking was then tuned on them, so their figures
// are regression bars, not a measure of how it generalizes.

// devVerbs ask with everyday verbs and idioms for technical actions.
var devVerbs = []request{
	{"axe the Friday retro from my calendar, we're skipping it this week", []string{"gcal_delete_event"}},
	{"chuck the Q3 deck into the shared Drive folder", []string{"gdrive_upload_file"}},
	{"fish out the email from the landlord about the deposit", []string{"gmail_search_emails"}},
	{"rustle up a Zoom room for the design review at 2", []string{"zoom_create_meeting"}},
	{"squirrel away a copy of the orders database in postgres before I mess with it", []string{"postgres_backup_database"}},
	{"bump ticket PROJ-12 over to review in Jira", []string{"jira_transition_issue"}},
	{"pencil in a dentist appointment for Tuesday at 9", []string{"gcal_create_event", "gcal_quick_add_event"}},
	{"shoot the guys a note on Discord that practice moved to 7", []string{"discord_send_message"}},
	{"hunt down every place in the code where we call parseConfig", []string{"github_search_code", "fs_grep"}},
	{"kill off that runaway docker container", []string{"docker_stop_container", "docker_remove_container"}},
	{"stick a reminder in Todoist to renew the passport", []string{"todoist_add_task"}},
	{"whip up a playlist of rainy day songs on Spotify", []string{"spotify_create_playlist"}},
	{"pull up Maria's phone number in HubSpot", []string{"hubspot_search_contacts"}},
	{"tack a checklist onto the launch card in Trello", []string{"trello_add_checklist"}},
	{"cross the grocery run off my Asana list", []string{"asana_complete_task"}},
}

// devSymptoms describe a symptom instead of asking for the remedy.
var devSymptoms = []request{
	{"docker is eating my whole disk", []string{"docker_prune_system"}},
	{"customers still get yesterday's prices on the site after I changed them, it's behind Cloudflare", []string{"cloudflare_purge_cache"}},
	{"the checkout service falls over every few minutes in kubernetes, what is it complaining about", []string{"k8s_get_pod_logs", "k8s_describe_pod", "k8s_get_events"}},
	{"our site feels sluggish for everyone today, does Datadog show latency going up", []string{"datadog_query_metrics"}},
	{"the dashboard backed by postgres takes ages to load, which queries are the culprits", []string{"postgres_list_slow_queries"}},
	{"the tests pass on my machine but CircleCI fails them now and then", []string{"circleci_find_flaky_tests"}},
	{"the app broke right after last night's Argo sync, put it back how it was", []string{"argocd_rollback_application"}},
	{"that container keeps gobbling memory, how much is it using", []string{"docker_container_stats"}},
	{"I'm on leave for two weeks, let anyone emailing me know in Gmail", []string{"gmail_set_vacation_responder"}},
	{"the website has been unreachable since noon, is the server even answering", []string{"netutil_ping"}},
	{"the new version on kubernetes is worse than the old one, go back", []string{"k8s_rollout_undo"}},
	{"Chrome says the connection to our site isn't private", []string{"netutil_check_ssl_certificate"}},
	{"the api box on EC2 is frozen solid, give it a kick", []string{"aws_ec2_reboot_instances"}},
	{"orders are piling up in Shopify and nothing has gone out to customers", []string{"shopify_fulfill_order", "shopify_list_orders"}},
	{"the lambda seems to time out, what does CloudWatch have on it", []string{"aws_cloudwatch_query_logs"}},
}

// devShared use a generic word that another domain's tool also uses.
var devShared = []request{
	{"drop a message in the ops channel on Teams that the VPN is back", []string{"teams_send_channel_message"}},
	{"wire 200 dollars to the freelancer through PayPal", []string{"paypal_send_payout"}},
	{"record on the Acme account in Salesforce that they called us today", []string{"salesforce_log_activity"}},
	{"book me a room in Lisbon for two nights", []string{"travel_book_hotel"}},
	{"tag this Intercom conversation as billing", []string{"intercom_tag_conversation"}},
	{"ping google.com and see if my network is up", []string{"netutil_ping"}},
	{"open the pricing page in the browser and click the signup button", []string{"browser_click", "browser_navigate"}},
	{"publish an order-created event to the orders topic on Pub/Sub", []string{"gcp_pubsub_publish"}},
	{"push the new image to the registry with tag 1.4", []string{"docker_push_image"}},
	{"check out the release branch in my local repo", []string{"git_checkout_branch"}},
	{"add the new Coldplay single to my queue", []string{"spotify_add_to_queue"}},
	{"send the order confirmation message into the SQS queue", []string{"aws_sqs_send_message"}},
	{"convert this voice recording to mp3", []string{"audio_convert_audio"}},
	{"who's on the Platform team in Teams", []string{"teams_list_team_members"}},
	{"which helm releases are out there on the cluster", []string{"k8s_helm_list_releases"}},
}

// TestRelevanceDev prints the development sets' top-3 figures with each
// layer of query expansion (see layers), the last being the ranking as
// shipped.
func TestRelevanceDev(t *testing.T) {
	sets := []struct {
		name string
		reqs []request
	}{{"devVerbs", devVerbs}, {"devSymptoms", devSymptoms}, {"devShared", devShared}}
	for _, l := range layers {
		total := 0
		line := ""
		for _, s := range sets {
			hits := rankRequestsWith(t, s.reqs, l.setup)
			total += hits
			line += fmt.Sprintf(" %s %d/%d", s.name, hits, len(s.reqs))
		}
		fmt.Printf("toolsearch: dev sets, %s:%s; all %d/45\n", l.name, line, total)
		if l.setup == nil { // the shipped ranking
			relevanceBar(t, "devVerbs, devSymptoms and devShared", total, 45)
		}
	}
}
