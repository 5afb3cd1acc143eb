package toolsearch

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The analyzer turns text into search terms, the same way for tool
// definitions and for queries, so that "createIssue", "create_issue",
// "Creating issues" and "created an issue" meet on the terms "creat" and
// "issu". It splits words on anything that is not a letter or a digit and on
// camelCase boundaries, lower-cases them, drops English stop words, rewrites
// common abbreviations to their long form and strips inflections with a
// light stemmer.

// analyze calls emit with each term of text, in order.
func analyze(text string, emit func(term string)) {
	words(text, func(word string) {
		parts := 0
		camel(word, func(part string) {
			parts++
			term(part, emit)
			// A name with a number ("sha256", "base64", "mp3") is also
			// written apart ("SHA-256"): its letters count on their own.
			if i := strings.IndexFunc(part, unicode.IsDigit); i >= 2 && isDigits(part[i:]) {
				term(part[:i], emit)
			}
		})
		if parts > 1 {
			// Brand names are written both ways: "GitHub" and "github".
			term(word, emit)
		}
	})
}

// words calls fn with each run of letters and digits of text, and with the
// word for each symbol that stands for one.
func words(text string, fn func(word string)) {
	start := -1
	for i, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			fn(text[start:i])
			start = -1
		}
		if word, ok := symbols[r]; ok {
			fn(word)
		}
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// camel calls fn with the parts of a camelCase word: a lower-case letter
// followed by a capital starts a part ("createIssue"), and so does the last
// capital of a run followed by a lower-case letter ("HTTPServer").
func camel(word string, fn func(part string)) {
	start := 0
	var prev rune
	for i, r := range word {
		if i > 0 && unicode.IsUpper(r) {
			split := unicode.IsLower(prev) || unicode.IsDigit(prev)
			if !split && unicode.IsUpper(prev) {
				next, _ := utf8.DecodeRuneInString(word[i+utf8.RuneLen(r):])
				split = unicode.IsLower(next)
			}
			if split {
				fn(word[start:i])
				start = i
			}
		}
		prev = r
	}
	fn(word[start:])
}

// term lower-cases word, filters and normalizes it, and emits the resulting
// terms (an abbreviation may stand for two words).
func term(word string, emit func(string)) {
	lower := strings.ToLower(word)
	if len(lower) < 2 && !isDigits(lower) {
		return
	}
	if stopWords()[lower] {
		return
	}
	if base, ok := irregularVerbs[lower]; ok {
		lower = base // "dug" is "dig": the stemmer only undoes regular forms
	}
	if long, ok := abbreviations[lower]; ok {
		for _, w := range long {
			emit(stem(w))
		}
		return
	}
	emit(stem(lower))
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// terms returns the terms of text.
func terms(text string) []string {
	var out []string
	analyze(text, func(t string) { out = append(out, t) })
	return out
}

// stem strips English inflections: plurals, -ed, -ing, -ation and a final
// e. It is deliberately lighter than Porter's: tool descriptions are short,
// and a wrong merge (two unrelated words on one stem) costs more than a
// missed one. Only lower-case ASCII words are stemmed; others are kept.
func stem(w string) string {
	if len(w) <= 3 || !isASCIILower(w) || stemExceptions[w] {
		return w
	}
	switch {
	case strings.HasSuffix(w, "sses"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ied") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "eed"):
		// agreed, speed, need: the e is part of the stem
	case strings.HasSuffix(w, "ed") && hasVowel(w[:len(w)-2]) && len(w)-2 >= 3:
		w = undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ing") && hasVowel(w[:len(w)-3]) && len(w)-3 >= 3:
		w = undouble(w[:len(w)-3])
	}
	switch {
	case strings.HasSuffix(w, "ization") && len(w)-7 >= 3:
		w = w[:len(w)-5] // organization -> organiz, like organize
	case strings.HasSuffix(w, "ation") && len(w)-5 >= 3:
		w = w[:len(w)-3] // translation -> translat, like translate
	}
	if strings.HasSuffix(w, "e") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

func isASCIILower(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func hasVowel(w string) bool { return strings.ContainsAny(w, "aeiouy") }

// undouble turns "runn" (from running) into "run", but keeps the double l,
// s and z of "install", "pass" and "buzz".
func undouble(w string) string {
	n := len(w)
	if n >= 2 && w[n-1] == w[n-2] && !strings.ContainsRune("aeiouylsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}

// symbols are the characters that stand for a word.
var symbols = map[rune]string{'%': "percent", '$': "dollar", '€': "euro", '£': "sterling"}

// stemExceptions are words the stemmer would merge with an unrelated one.
var stemExceptions = map[string]bool{
	"news": true, "series": true, "species": true, "always": true, "sometimes": true,
	"windows": true, "kubernetes": true, "redis": true, "jenkins": true, "analysis": true,
}

// abbreviations rewrite short forms to the words tool descriptions use. They
// apply to definitions and queries alike.
var abbreviations = map[string][]string{
	"repo": {"repository"}, "repos": {"repository"}, "db": {"database"}, "dbs": {"database"},
	"k8s": {"kubernetes"}, "msg": {"message"}, "msgs": {"message"}, "img": {"image"},
	"pic": {"picture"}, "pics": {"picture"}, "dir": {"directory"}, "dirs": {"directory"},
	"doc": {"document"}, "docs": {"document"}, "config": {"configuration"},
	"configs": {"configuration"}, "env": {"environment"}, "info": {"information"},
	"pr": {"pull", "request"}, "prs": {"pull", "request"}, "mr": {"merge", "request"},
	"dm": {"direct", "message"}, "dms": {"direct", "message"}, "ci": {"continuous", "integration"},
	"calc": {"calculate"}, "stats": {"statistics"}, "vm": {"virtual", "machine"},
	"vms": {"virtual", "machine"}, "auth": {"authentication"}, "pwd": {"password"},
	"addr": {"address"}, "org": {"organization"}, "orgs": {"organization"}, "params": {"parameter"},
	"tz": {"timezone"}, "qty": {"quantity"}, "gcp": {"google", "cloud"},
	"gcs": {"google", "cloud", "storage"}, "cal": {"calendar"}, "txn": {"transaction"},
	"acct": {"account"},
}

// The tables below (stop words, value classes, synonyms) are built on first
// use, not at start-up: a process that never searches (wield serve with
// fewer tools than the threshold, every program that imports the package
// for its types) does not pay 0.36 ms and 155 KB of allocations in its
// package init for them.

// stopWords carry no meaning about which tool to use.
var stopWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are as at be
	because been before being below between both but by can could did do does doing done down during
	each few for from further had has have having he her here hers herself him himself his how i if in
	into is it its itself just let lets me might more most must my myself no nor not of off on once
	only or other our ours ourselves out over own please same she should so some such than that the
	their theirs them themselves then there these they this those through to too under until up us very
	was we were what when where which while who whom why will with would you your yours yourself
	yourselves i'd i'm im want wanna need needs like could would something anything thing things
	someone somebody hey hi thanks thank okay ok quickly real actually really gonna
	many much one ones several every everything everyone everybody anymore instead going go goes
	gone got know knows let like likely right maybe perhaps probably whole yet still already ever`) {
		m[w] = true
	}
	return m
})

// synonymGroups are words people use interchangeably when they ask for a
// tool. They are general-purpose English, not tuned to a catalog: a query
// term also matches the other members of its groups, at a discount.
var synonymGroups = [][]string{
	{"create", "add", "new", "make", "open", "insert", "register", "generate", "produce"},
	{"delete", "remove", "erase", "destroy", "drop", "discard", "purge", "trash", "wipe"},
	{"list", "enumerate", "browse", "all", "index"},
	{"get", "fetch", "retrieve", "read", "view", "show", "display", "lookup", "see", "check", "inspect"},
	{"update", "edit", "modify", "change", "alter", "patch", "adjust", "set"},
	{"search", "find", "query", "lookup", "look", "locate", "seek"},
	{"send", "post", "deliver", "dispatch", "notify", "tell"},
	{"message", "chat", "note", "text"},
	{"file", "document"},
	{"folder", "directory"},
	{"image", "picture", "photo", "photograph", "pic", "screenshot"},
	{"configuration", "settings", "preferences", "options", "setup"},
	{"issue", "bug", "ticket", "defect", "problem"},
	{"meeting", "event", "appointment", "call"},
	{"reminder", "alert", "notification", "alarm"},
	{"payment", "pay", "charge", "money"},
	{"refund", "reimburse", "money"},
	{"customer", "client", "buyer"},
	{"user", "member", "account", "person", "people", "employee"},
	{"cancel", "abort", "revoke"},
	{"start", "launch", "run", "begin", "trigger", "kick", "execute", "fire"},
	{"stop", "halt", "terminate", "kill", "shutdown", "end"},
	{"restart", "reboot", "bounce", "reload"},
	{"upload", "put", "push"},
	{"download", "save", "pull", "export"},
	{"schedule", "book", "reserve", "plan"},
	{"write", "compose", "draft", "author"},
	{"reply", "respond", "answer"},
	{"comment", "remark", "feedback"},
	{"invite", "include"},
	{"song", "track", "music", "tune"},
	{"speech", "voice", "spoken", "audio", "said", "recording"},
	{"summary", "summarize", "digest", "overview", "recap", "tldr"},
	{"count", "number", "total", "tally"},
	{"error", "failure", "fail", "crash", "exception", "broken"},
	{"log", "logs", "journal"},
	{"convert", "transform", "translate"},
	{"copy", "duplicate", "clone"},
	{"move", "relocate", "transfer", "rename"},
	{"location", "place", "address", "position", "where"},
	{"website", "site", "page", "web", "webpage"},
	{"price", "cost", "fee", "rate", "quote", "worth"},
	{"percent", "percentage"},
	{"direction", "route", "navigate", "way"},
	{"archive", "zip", "compress"},
	{"permission", "access", "role", "grant"},
	{"deploy", "release", "ship", "rollout"},
	{"status", "state", "health", "progress"},
	{"size", "dimension", "length"},
	{"today", "now", "current", "latest"},
	{"secret", "password", "credential", "token", "key"},
	{"email", "mail", "inbox"},
	{"weather", "forecast", "temperature"},
	{"team", "group"},
	{"link", "url", "address"},
	{"container", "docker"},
	{"machine", "server", "instance", "host", "box"},
	{"invoice", "bill"},
	{"sale", "deal", "opportunity"},
	{"spreadsheet", "sheet", "table"},
	{"talk", "speak", "say", "said", "speech"},
	{"close", "resolve", "finish", "complete", "done"},
	{"assign", "allocate", "delegate"},
	{"label", "tag", "category"},
	{"picture", "drawing", "illustration"},
	{"calculate", "compute", "evaluate", "solve"},
}

// phrases are two-word expressions, mostly phrasal verbs, that mean one
// word. The words of a phrase still count on their own.
var phrases = map[string]string{
	"look up": "search", "find out": "search", "set up": "configure", "sign up": "register",
	"log in": "login", "sign in": "login", "shut down": "stop", "turn off": "disable",
	"turn on": "enable", "spin up": "start", "start up": "start", "take down": "stop",
	"clean up": "delete", "get rid": "delete", "throw away": "delete", "write down": "note",
	"money back": "refund", "check out": "checkout", "back up": "backup", "roll back": "rollback",
	"fill in": "fill", "fill out": "fill", "hang up": "end", "put off": "postpone",
	"call off": "cancel", "sum up": "summarize", "break down": "analyze", "pick up": "resume",
}

// valueClasses name the kind of a value a user writes ("Spanish",
// "miles", "EUR", "Monday"), because tool definitions name the parameter
// ("language", "unit", "currency", "date") rather than its values. A query
// term that is such a value also searches for its class.
var valueClasses = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	classes := map[string]string{
		"language": `english spanish french german italian portuguese dutch russian chinese mandarin
			cantonese japanese korean arabic hindi bengali urdu turkish polish ukrainian swedish norwegian
			danish finnish greek hebrew thai vietnamese indonesian malay czech romanian hungarian persian`,
		"unit": `mile kilometer km meter metre centimeter millimeter foot feet inch yard pound lb kilogram
			kg gram ounce oz ton liter litre gallon quart pint cup celsius fahrenheit kelvin mph kph knot
			acre hectare byte kilobyte megabyte gigabyte terabyte calorie joule watt horsepower`,
		"currency": `dollar usd euro eur yen jpy sterling gbp franc chf yuan cny rupee inr peso won krona
			real brl`,
		"date": `monday tuesday wednesday thursday friday saturday sunday january february march april
			june july august september october november december tomorrow yesterday weekend`,
	}
	for class, list := range classes {
		c := stem(class)
		for _, w := range strings.Fields(list) {
			analyze(w, func(t string) {
				if t != c {
					m[t] = c
				}
			})
		}
	}
	return m
})

// synonyms maps a stemmed term to the stemmed other members of its groups.
var synonyms = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		var stems []string
		for _, w := range g {
			analyze(w, func(t string) { stems = append(stems, t) })
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b && !slices.Contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
})
