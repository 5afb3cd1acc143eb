package toolsearch

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"the of and", nil},
		{"github_create_issue", []string{"github", "creat", "issu"}},
		{"createIssue", []string{"creat", "issu", "createissu"}},
		{"HTTPServer", []string{"http", "server", "httpserver"}},
		{"GitHub repos", []string{"git", "hub", "github", "repository"}},
		{"k8s-get-pods", []string{"kubernetes", "get", "pod"}},
		{"s3_put_object ec2", []string{"s3", "put", "object", "ec2", "ec"}},
		// A name with a number is also written apart: "sha256" is "SHA-256".
		{"sha256 SHA-256 base64 v2 k8s", []string{"sha256", "sha", "sha", "256", "base64", "bas", "v2", "kubernetes"}},
		{"Creating issues, created an issue", []string{"creat", "issu", "creat", "issu"}},
		{"open a PR", []string{"open", "pull", "request"}},
		{"15% off", []string{"15", "percent"}},
		{"Größe ändern", []string{"größe", "ändern"}},
		{"x y 7", []string{"7"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, terms(tt.text)); diff != "" {
			t.Errorf("terms(%q) (-want +got):\n%s", tt.text, diff)
		}
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"issues", "issu"},
		{"issue", "issu"},
		{"repositories", "repository"},
		{"repository", "repository"},
		{"copied", "copy"},
		{"running", "run"},
		{"settings", "set"},
		{"installing", "install"},
		{"translation", "translat"},
		{"translate", "translat"},
		{"organization", "organiz"},
		{"organize", "organiz"},
		{"status", "status"},
		{"access", "access"},
		{"analysis", "analysis"},
		{"news", "news"},
		{"kubernetes", "kubernetes"},
		{"speed", "speed"},
		{"string", "string"},
		{"aws", "aws"},
		{"café", "café"},
	}
	for _, tt := range tests {
		if got := stem(tt.in); got != tt.want {
			t.Errorf("stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	vocab := map[string]int32{"oncall": 0, "databas": 1, "whois": 2, "iam": 3}
	tests := []struct {
		query string
		want  []string // the first term of each group
	}{
		{"who is on call", []string{"call", "oncall"}},
		{"who is", nil}, // two stop words make no compound, even "whois"
		{"I am", nil},
		// WordNet relates "base" to locating (see wordnetTerms).
		{"data base data", []string{"data", "bas", "locat", "databas"}},
		{"mail bob@example.com", []string{"email", "mail"}},
		{"ping 10.0.0.1", []string{"ip", "ping"}},
		{"fetch https://example.com/a", []string{"url", "fetch"}},
		{"text +1 555 123 4567 now", []string{"phon", "text", "now"}},
		{"into Spanish", []string{"spanish", "languag"}},
		{"give my money back", []string{"giv", "money", "back", "shar", "refund"}},
		// A host name is a domain; related terms follow the words
		// (see relatedTerms), a phrase's after its words.
		{"does shop.example.com resolve", []string{"domain", "resolv"}},
		{"jot down the plan", []string{"jot", "plan", "not", "creat"}},
		{"the site is slow", []string{"sit", "slow", "performanc", "latency", "query"}},
	}
	for _, tt := range tests {
		var got []string
		for _, q := range queryTerms(tt.query, vocab, related()) {
			got = append(got, q.group[0])
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("queryTerms(%q) (-want +got):\n%s", tt.query, diff)
		}
	}
}

func TestQueryTermsSynonyms(t *testing.T) {
	q := queryTerms("remove", nil, related())
	if len(q) != 1 {
		t.Fatalf("queryTerms(remove) = %v, want one group", q)
	}
	for _, want := range []string{"remov", "delet", "eras"} {
		if !slices.Contains(q[0].group, want) {
			t.Errorf("group of remove %v lacks %q", q[0].group, want)
		}
	}
	if q[0].group[0] != "remov" {
		t.Errorf("group of remove starts with %q, want the word itself", q[0].group[0])
	}
	// A repeated word counts twice, in one group; the first time as the
	// query's lead word (see leadWeight).
	q = queryTerms("logs logs", nil, related())
	if len(q) != 1 || q[0].weight != 1+leadWeight {
		t.Errorf("queryTerms(logs logs) = %+v, want one group of weight %v", q, 1+leadWeight)
	}
}

// TestQueryTermsPossessive checks that a possessive's s makes no compound
// with its word: "customer's" is the word once, not once more as
// "customers", while two words the vocabulary knows as one still are.
func TestQueryTermsPossessive(t *testing.T) {
	vocab := map[string]int32{"customer": 0, "oncall": 1}
	weights := map[string]float64{}
	for _, q := range queryTerms("the customer's on call", vocab, nil) {
		weights[q.group[0]] = q.weight
	}
	if weights["customer"] != leadWeight {
		t.Errorf("customer's weighs %v, want %v (the lead word, once)", weights["customer"], leadWeight)
	}
	if weights["oncall"] != 1 {
		t.Errorf("on call: compound oncall weighs %v, want 1", weights["oncall"])
	}
}

// TestQueryTermsQuoted checks that words in quotes weigh quotedWeight and
// are not the lead word, while an apostrophe inside a word quotes nothing.
func TestQueryTermsQuoted(t *testing.T) {
	for _, tt := range []struct {
		query string
		want  map[string]float64
	}{
		{"tick off 'buy milk' on my list", map[string]float64{"tick": leadWeight, "buy": quotedWeight, "milk": quotedWeight, "list": 1}},
		{`“call the caterer” is a card on the board`, map[string]float64{"call": quotedWeight, "caterer": quotedWeight, "card": leadWeight, "board": 1}},
		{`set the topic to "pizza friday".`, map[string]float64{"set": leadWeight, "topic": 1, "pizza": quotedWeight, "friday": quotedWeight}},
		{"it's Maria's turn, don't wait", map[string]float64{"maria": leadWeight, "turn": 1, "don": 1, "wait": 1}},
	} {
		got := map[string]float64{}
		for _, q := range queryTerms(tt.query, nil, nil) {
			got[q.group[0]] = q.weight
		}
		for term, w := range tt.want {
			if got[term] != w {
				t.Errorf("queryTerms(%q): %s weighs %v, want %v (all: %v)", tt.query, term, got[term], w, got)
			}
		}
	}
}
