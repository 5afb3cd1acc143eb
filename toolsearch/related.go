package toolsearch

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
)

// The related-term table bridges the words people use for a task and the
// words tools describe themselves with, where the two share nothing:
//
//   - everyday verbs and idioms for technical actions: "jot down" is
//     writing a note, "tick off" completing a task, "blow up" enlarging,
//     "bounce" restarting, "push live" deploying;
//   - a symptom for its remedy: "still see the old" version is a stale
//     cache to purge, "slow" queries to look at, a "full" disk things to
//     prune, "flaky" tests to find, "broke after the deploy" a rollback;
//   - a domain's everyday words for its terms: an "outage" is an
//     incident, "stock" is inventory, "vocals" are stems, a "headshot" an
//     image.
//
// Unlike the synonyms, which pool words that mean the same, a related term
// adds words the right tool is likely to use, at a lower weight
// (relatedWeight), so it mostly decides between tools that match the rest
// of the request, and a word as written weighs about three related ones. It is
// general English about software, services and devices, written from what
// the tasks are called, not from any one catalog's wording. Keys of one to
// four words are matched on the stemmed words of a query, stop words
// included ("on it", "my way").
//
// It builds the map on each call, like wordnetTerms: only the related
// table, built on the first search, needs it.
func relatedTerms() map[string]string {
	return map[string]string{
		// writing things down, telling people
		"jot": "note write", "jot down": "note create", "note down": "note create", "make a note": "note create",
		"shoot": "send message", "drop a line": "send message", "heads up": "notify message", "let know": "notify message send", "hit up": "send message",
		"reach out": "send message contact", "private": "direct", "privately": "direct", "in private": "direct",
		"one on one": "direct", "between us": "direct", "dm": "direct message",
		"get the word out": "post publish announce", "spread the word": "post publish announce",
		"announce": "post publish", "shout out": "post publish", "go public": "publish post",
		"tweet": "post twitter", "share with": "share permission", "loop in": "invite add",
		"bring in": "invite add", "cc": "forward", "pass on": "forward", "hand off": "assign",
		"hand over": "assign", "give to": "assign", "take over": "assign",

		// finishing, undoing, replacing
		"tick off": "complete close task", "check off": "complete close task", "cross off": "complete close task",
		"mark done": "complete close", "done with": "complete close", "wrap up": "complete close finish",
		"fixed": "resolve close", "sorted": "resolve close", "solved": "resolve close", "all clear": "resolve",
		"on it": "acknowledge", "looking into": "acknowledge", "i got this": "acknowledge", "got it": "acknowledge",
		"take back": "rollback undo revert", "go back": "rollback undo revert", "put back": "restore undo",
		"previous version": "rollback undo", "last good": "rollback undo",
		"revert": "rollback undo", "undo": "rollback revert", "bring back": "restore recover",
		"recover": "restore", "undelete": "restore", "swap": "replace set change", "switch over": "set change update",
		"swap out": "replace set", "point to": "record set dns", "bump": "update increase upgrade",
		"top up": "increase add", "restock": "inventory update", "lock in": "finalize confirm",
		"seal": "finalize", "sign off": "approve", "okay": "approve", "greenlight": "approve",

		// making bigger, smaller, cutting, removing
		"blow up": "upscale enlarge resize", "enlarge": "upscale resize", "make bigger": "upscale resize enlarge",
		"sharper": "upscale resolution", "blurry": "upscale resolution",
		"pixelated": "upscale resolution", "higher resolution": "upscale", "shrink": "compress resize reduce", "make smaller": "compress resize reduce", "knock down": "compress reduce",
		"slim down": "compress reduce", "too big": "compress reduce size", "too large": "compress reduce size",
		"lighter": "compress reduce", "clip": "trim cut", "snip": "trim cut", "chop": "trim cut",
		"shorten": "trim cut", "cut off": "trim cut", "ditch": "remove delete",
		"get rid": "remove delete", "strip": "remove separate", "strip out": "remove separate", "nuke": "delete remove", "wipe out": "delete remove", "tear down": "delete remove stop",
		"cutout": "remove background", "green screen": "background remove",
		"transparent": "background remove",

		// starting, stopping, restarting, shipping
		"bounce": "restart", "kick": "restart start", "give it a kick": "restart", "cycle": "restart",
		"power cycle": "reboot restart", "fire up": "start launch", "boot up": "start", "turn it off": "stop",
		"shut off": "stop", "kill": "stop terminate", "push live": "deploy release", "go live": "deploy release publish",
		"put live": "deploy release", "ship it": "deploy release", "roll out": "deploy rollout",
		"push out": "deploy release", "live": "deploy release publish", "kick off": "trigger start run",
		"try again": "retry rerun", "run again": "rerun retry", "redo": "rerun retry",
		"kick out": "ban remove member", "boot out": "ban remove", "for good": "ban permanent",
		"block": "ban", "spam": "ban remove", "spamming": "ban remove", "troll": "ban", "abuse": "ban report",

		// symptoms and their remedies
		"stale": "cache purge", "old version": "cache purge", "still see": "cache purge",
		"still showing": "cache purge", "not updating": "cache purge", "outdated": "cache purge update",
		"cached": "cache purge", "refresh": "cache purge reload", "slow": "slow performance latency query",
		"sluggish": "slow performance latency", "dragging": "slow performance", "lag": "latency slow",
		"laggy": "latency slow", "bottleneck": "slow performance", "timing out": "timeout slow latency",
		"full": "space prune clean delete", "out of space": "space prune clean", "no room": "space prune clean",
		"disk space": "prune clean storage", "junk": "prune clean unused", "clutter": "prune clean unused",
		"leftover": "prune unused", "unused": "prune remove", "free up": "prune clean delete",
		"broke": "error rollback", "broken": "error rollback", "regression": "rollback undo",
		"flaky": "flaky test intermittent", "at random": "flaky intermittent", "randomly": "flaky intermittent",
		"sometimes fail": "flaky intermittent", "intermittent": "flaky",
		"keeps dying": "crash log event describe", "dying": "crash log event", "crashloop": "crash log restart",
		"keeps restarting": "crash log event", "what happened": "log event describe history",
		"not trusted": "ssl certificate", "untrusted": "ssl certificate", "insecure": "ssl certificate",
		"padlock": "ssl certificate", "https": "ssl certificate", "cert": "certificate ssl",
		"can't reach": "dns ping status", "cannot reach": "dns ping status", "unreachable": "dns ping status",
		"not loading": "status dns ping", "down": "status incident outage ping", "who owns": "whois domain",
		"owner of": "whois", "registered to": "whois domain", "billed twice": "refund", "double charged": "refund",
		"overcharged": "refund", "money back": "refund", "chargeback": "dispute", "leaked": "secret rotate",
		"forgot": "reset password", "locked out": "reset password unlock", "stuck": "cancel restart",
		"hung": "cancel restart", "typo": "edit update",
		"fall over": "crash log event", "falling over": "crash log event", "complaining": "log error",
		"hog": "top usage memory", "hogging": "top usage memory", "maxed out": "top usage", "pegged": "top usage",
		"takes ages": "slow performance", "takes forever": "slow performance", "crawling": "slow performance",
		"frozen": "restart reboot", "unresponsive": "restart reboot", "not responding": "restart reboot ping",
		"offline": "status ping", "500": "error incident", "502": "error incident", "503": "error incident",
		"low on": "inventory quantity", "running low": "inventory quantity", "open for": "free slot available",
		"look like": "edit style", "leak": "memory usage", "leaking": "memory usage", "oom": "memory crash event",
		"out of memory": "memory crash event usage", "crashing": "crash log event", "won't start": "log event describe",
		"too long": "trim cut", "can't find": "search find", "where did i put": "search find", "lost": "search restore",
		"get back to": "reply", "write back": "reply", "catch up on": "history read summary",
		"block off": "event create", "block out": "event create", "clear my": "delete cancel event",
		"cname": "dns record", "mx": "dns record mail", "txt": "dns record", "aaaa": "dns record",
		"too loud": "volume", "too quiet": "volume", "can't open": "permission share access",
		"can't access": "permission share access", "no access": "permission share", "access denied": "permission share",
		"is red": "fail status build", "went red": "fail status build", "expired": "certificate expiry",
		"expiring": "certificate expiry", "out of stock": "inventory", "overdue": "invoice unpaid", "unpaid": "invoice",
		"double booked": "event list", "no sound": "volume", "muted": "volume", "sideways": "edit image",
		"upside down": "edit image", "wrong language": "translate detect language", "gibberish": "detect language",
		"propagate": "dns lookup record", "by accident": "restore undo", "accidentally": "restore undo",
		"overwritten": "restore undo", "all hands": "meeting event", "screen recording": "video", "screencast": "video", "split the bill": "pay payout", "settle up": "pay payout", "chip in": "pay payout", "running out of": "space prune clean", "not private": "ssl certificate",

		// everyday words for a domain's terms
		"outage": "incident", "incident": "pagerduty", "paging": "incident alert pagerduty oncall", "pager": "pagerduty incident oncall",
		"on call": "oncall", "alarm": "alert monitor", "noisy": "mute alert", "shush": "mute silence",
		"silence": "mute", "snooze": "mute", "stock": "inventory", "in stock": "inventory", "units": "inventory quantity", "shop": "store shopify", "storefront": "store shopify",
		"coupon": "discount code", "promo": "discount code", "lead": "crm contact", "leads": "crm contact lead",
		"prospect": "lead contact crm", "drip": "sequence enroll",
		"nurture": "sequence enroll", "email sequence": "sequence enroll", "sign up for": "enroll subscribe",
		"vocals": "stems separate", "instrumental": "stems separate",
		"karaoke": "stems separate vocals", "acapella": "stems separate", "podcast": "audio", "episode": "audio",
		"voice memo": "audio recording", "tune": "song music", "what song": "identify song", "which song": "identify song",
		"name that tune": "identify song", "headshot": "image photo", "selfie": "image photo", "portrait": "image photo",
		"logo": "image", "snapshot": "backup", "keep a copy": "backup", "copy of the database": "backup database",
		"safe copy": "backup", "before the migration": "backup", "todo list": "task", "to do": "task",
		"chore": "task", "errand": "task", "timeline": "tweet twitter", "followers": "twitter social",
		"receipt": "invoice", "paycheck": "payout", "wire": "payout transfer", "budget": "cost billing",
		"spent": "cost billing", "spend": "cost billing", "bill": "invoice billing cost", "cost us": "cost billing",
		"statement": "query sql", "statements": "query sql", "image tag": "image set", "version": "release image",
		"build logs": "job log console output", "build log": "job log console output", "my way": "download get send",
		"domain": "dns whois", "name server": "dns", "hostname": "dns lookup", "resolve to": "dns lookup record",
		"flight": "travel", "layover": "flight", "hotel room": "hotel book",

		// mail and chat
		"bin": "trash delete", "chuck": "trash delete", "junk mail": "trash filter spam",
		"newsletter": "filter label", "unsubscribe": "filter", "skip my inbox": "filter archive label",
		"out of office": "vacation responder", "away message": "vacation responder", "auto reply": "vacation responder",
		"thumbs up": "reaction emoji", "emoji": "reaction", "react": "reaction", "like it": "reaction",
		"stays at the top": "pin", "sticky": "pin", "keep on top": "pin", "bookmark": "pin save",
		"set my status": "status", "away": "status", "busy": "status",

		// calendar and meetings
		"standup": "meeting event", "stand up": "meeting event", "sync": "meeting event", "catch up": "meeting event",
		"huddle": "meeting event", "one to one": "meeting event", "reschedule": "update event move",
		"push to": "update event move", "move the meeting": "update event", "rsvp": "respond event",
		"accept the invite": "respond event", "decline": "respond event", "free time": "free slot",
		"when is everyone free": "free slot", "available": "free slot",

		// weather and places
		"rain": "weather forecast", "pour": "rain weather forecast", "drizzle": "weather forecast", "snow": "weather forecast",
		"umbrella": "weather forecast rain", "sunny": "weather forecast", "jacket": "weather forecast",
		"this afternoon": "hourly forecast", "tonight": "hourly forecast", "in an hour": "hourly forecast",
		"drive": "directions distance route", "commute": "directions distance", "how far": "distance directions",
		"walk to": "directions", "get to": "directions", "near me": "places nearby search", "nearby": "places search",
		"around here": "places nearby", "coordinates": "geocode", "lat long": "geocode",

		// music, video, sound
		"louder": "volume", "quieter": "volume", "notch": "volume", "turn it up": "volume", "turn it down": "volume",
		"next song": "skip next", "skip this": "skip next", "queue up": "queue add", "what's playing": "currently playing",
		"too big to send": "compress reduce size", "captions": "subtitles transcript", "subtitle": "subtitles",
		"words at the bottom": "subtitles", "make out what": "subtitles transcribe", "can't hear": "subtitles transcribe",
		"read it out loud": "text speech", "read aloud": "text speech", "say it out loud": "text speech",
		"write down what was said": "transcribe", "what was said": "transcribe",

		// cloud, ops, code
		"which ones are up": "describe list instance", "which are running": "describe list instance",
		"what's running": "list describe", "running forever": "cancel stop", "make it stop": "cancel stop",
		"never started": "trigger build run start", "get it going": "trigger build start run", "by hand": "trigger manual",
		"more copies": "scale replica", "more replicas": "scale", "scale up": "scale", "scale down": "scale",
		"dead links": "url status check link", "broken links": "url status check link", "404": "status url",
		"who wrote": "blame", "who changed": "blame", "waiting on me": "review pull request",
		"needs my review": "review pull request", "review requests": "review pull request",
		"security warning": "ssl certificate", "not secure": "ssl certificate", "wake up": "trigger incident page",
		"page someone": "trigger incident", "exceptions": "error issue", "errors in prod": "error issue",
		"traffic": "analytics visitor", "visitors": "analytics", "hits": "analytics", "where is this ip": "geolocation ip",
		"is the server alive": "ping status", "on time": "flight status", "delayed": "flight status",

		// money, shop, customers, work
		"what's the damage": "balance cost", "how much do we have": "balance", "in the bank": "balance",
		"shares": "stock quote", "ticker": "stock quote", "share price": "stock quote", "market": "stock",
		"keeps calling": "lookup phone number", "unknown number": "lookup phone number", "who is calling": "lookup phone number",
		"send out the order": "fulfill order", "ship the order": "fulfill order", "sales this": "sales report",
		"pipeline": "deal opportunity", "canned response": "macro", "template reply": "macro",
		"hand her": "assign", "hand his": "assign", "hand their": "assign", "reassign": "assign",
		"gist": "summary", "tl dr": "summary", "short version": "summary", "in a nutshell": "summary",
		"column": "list move card", "lane": "list move card", "park": "move", "give access": "share permission",
		"who can see": "permission", "fill in": "append write rows", "add rows": "append rows",
		"remind me": "task reminder", "what's in this picture": "describe image", "text in this": "ocr extract text",
		"make it a png": "convert image format", "make it a jpg": "convert image format",

		// asking what there is, getting somewhere, money and measures
		"what's on": "list events", "what have i got": "list events", "what's coming up": "list events",
		"get from": "directions", "by train": "directions transit", "by bus": "directions transit",
		"by subway": "directions transit", "transit": "directions", "fire off": "send",
		"point it at": "record set dns", "point at": "record set dns", "loop into": "invite add attendees update",
		"revenue": "financials income", "earnings": "financials income", "profit": "financials income",
		"balance sheet": "financials", "oven": "temperature convert", "recipe": "convert units",
		"degrees": "temperature unit convert", "the build": "workflow run pipeline job",
	}
}

// relatedWeight discounts a related term against a word the user wrote,
// and below a synonym's discount: it is evidence, not the same word.
var relatedWeight = 0.35

// wordnetWeight discounts a term from WordNet's relations (see
// wordnetTerms) below a hand-written related term: WordNet knows every
// sense of a word, and the most frequent ones are not always the one a
// request means.
var wordnetWeight = 0.25

// relatedKey is one key of relatedTerms or wordnetTerms past its first
// word, with the terms it adds and their weight.
type relatedKey struct {
	rest   []string
	terms  []string
	weight float64
}

// related is the table of relatedTerms and wordnetTerms together.
var related = sync.OnceValue(func() relatedTable { return buildRelated(relatedTerms(), wordnetTerms()) })

// relatedTable maps the first stemmed word of each key to its keys,
// longest first.
type relatedTable map[string][]relatedKey

// buildRelated makes the table of a hand-written map and of WordNet's,
// whose keys and terms are stemmed already (see wordnetTerms). A
// hand-written key wins over WordNet's for the same stemmed words.
func buildRelated(hand, wordnet map[string]string) relatedTable {
	m := make(relatedTable, len(hand)+len(wordnet))
	put := func(key []string, ts []string, weight float64) {
		m[key[0]] = append(m[key[0]], relatedKey{rest: key[1:], terms: ts, weight: weight})
	}
	seen := make(map[string]bool, len(hand))
	for _, k := range slices.Sorted(maps.Keys(hand)) {
		var key []string
		words(k, func(w string) { key = append(key, keyWord(w)) })
		if len(key) == 0 || seen[strings.Join(key, " ")] {
			continue
		}
		seen[strings.Join(key, " ")] = true
		put(key, terms(hand[k]), relatedWeight)
	}
	for k, v := range wordnet {
		if !seen[k] {
			put(strings.Fields(k), strings.Fields(v), wordnetWeight)
		}
	}
	for _, ks := range m {
		slices.SortFunc(ks, func(a, b relatedKey) int {
			return cmp.Or(cmp.Compare(len(b.rest), len(a.rest)), slices.Compare(a.rest, b.rest))
		})
	}
	return m
}

// relatedOf calls add with each term that the words of query relate to in
// table, with its weight (see relatedTerms and wordnetTerms). Keys are
// matched longest first, left to right, and a word belongs to one key at
// most: "jot down" is a note, and its "down" is not also an outage. A
// phrasal verb may have its object between verb and particle, as English
// allows: "kick them out" matches "kick out".
func relatedOf(table relatedTable, query string, add func(term string, weight float64)) {
	var ws []string
	words(query, func(w string) { ws = append(ws, keyWord(w)) })
	var used []bool // particles taken by a separated phrasal verb
	for i := 0; i < len(ws); {
		if used != nil && used[i] {
			i++
			continue
		}
		n := 1
	keys:
		for _, k := range table[ws[i]] {
			if i+1+len(k.rest) <= len(ws) && slices.Equal(k.rest, ws[i+1:i+1+len(k.rest)]) {
				for _, t := range k.terms {
					add(t, k.weight)
				}
				n += len(k.rest)
				break
			}
			if len(k.rest) != 1 || !particles[k.rest[0]] {
				continue
			}
			for gap := 1; gap <= maxParticleGap && i+1+gap < len(ws); gap++ {
				if ws[i+1+gap] == k.rest[0] {
					for _, t := range k.terms {
						add(t, k.weight)
					}
					if used == nil {
						used = make([]bool, len(ws))
					}
					used[i+1+gap] = true
					break keys
				}
			}
		}
		i += n
	}
}

// particles end the phrasal verbs whose object may stand inside them
// ("turn it down", "hand the tickets over").
var particles = map[string]bool{
	"up": true, "down": true, "out": true, "off": true, "in": true, "into": true, "on": true,
	"over": true, "back": true, "away": true, "around": true, "through": true,
}

// maxParticleGap is how many words may stand between a phrasal verb and
// its particle: an object of one or two words ("them", "the build").
const maxParticleGap = 2

// keyWord is a word as the keys of the related-term tables are matched:
// lower-cased, irregular verb forms made regular, stemmed.
func keyWord(w string) string {
	w = strings.ToLower(w)
	if base, ok := irregularVerbs[w]; ok {
		w = base
	}
	return stem(w)
}
