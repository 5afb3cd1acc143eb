package toolsearch

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/wieldhq/wield"
)

// Document-side expansion. A tool's name says what it does in a handful of
// technical words: a verb ("delete", "put", "transition") and an object
// ("event", "payout", "cache"). People ask for the same thing with the
// everyday words of its class: they "scrap" or "axe" an event, "stash" a
// file, "fish out" an email, "send 50 bucks", and describe the trouble the
// tool cures instead of the tool: a "frozen" box to reboot, a "sluggish"
// site's metrics, a disk "eaten" by junk to prune.
//
// nameTerms maps a word of tool names to those everyday words. Each tool
// gets the words of its name's words in a field of its own (fieldAction),
// so that any tool named with a word of the table, listed here or not,
// is found by them: it is English and the domain's common knowledge about
// actions and objects, not about any one tool or request. A query word
// matches them as it matches a description's word, at that field's weight.
// The words are single words: phrasal verbs meet here on their verb ("dig
// up", "fish out", "pencil in"), since the particles are stop words.
var nameTerms = map[string]string{
	// making, scheduling
	"create":   "whip rustle knock pencil spin cook sketch churn crank mock assemble",
	"add":      "stick tack throw pop slap toss pencil jot",
	"new":      "whip rustle",
	"schedule": "pencil slot line",
	"book":     "grab snag",
	"quick":    "pencil jot",
	"draft":    "scribble jot",
	// removing, cancelling
	"delete": "scrap axe ditch nix bin toss junk scrub nuke chuck lose dump zap cull strike shred torch clear empty",
	"remove": "scrap axe ditch nix toss junk scrub nuke lose dump zap cull strike",
	"trash":  "bin chuck toss junk ditch scrap",
	"cancel": "scrap axe nix drop scrub bail skip plug stuck hang forever",
	"stop":   "pause freeze shut plug",
	"ban":    "boot block",
	"prune":  "junk clutter leftover dangling full eat space disk free clean bloat storage room",
	"purge":  "stale old outdated yesterday refresh flush clear",
	"cache":  "stale old outdated yesterday clear",
	// finding, reading, listing
	"search":  "dig hunt fish comb scour root rummage ferret trawl sniff chase lost",
	"find":    "dig hunt fish root rummage ferret trawl chase",
	"grep":    "hunt dig occurrence",
	"get":     "grab peek glance bring",
	"read":    "peek glance",
	"contact": "phone person",
	// storing, sending, paying
	"upload":   "stash stick chuck stow park squirrel store dump shove pop tuck plonk keep drop",
	"put":      "stash stick chuck stow park squirrel store dump shove pop tuck plonk keep drop",
	"send":     "shoot ping buzz holler shout nudge blast",
	"post":     "shoot ping holler shout blast broadcast",
	"message":  "ping word line shout",
	"payout":   "money buck cash dollar pay wire quid tip settle reimburse spot euro",
	"pay":      "buck cash dollar wire quid tip settle spot euro",
	"payment":  "buck cash dollar",
	"transfer": "wire",
	// changing, moving, finishing
	"update":     "bump swap tweak fix version flip redo rework typo wrong mistake correct",
	"set":        "swap switch flip",
	"transition": "move bump advance column stage shove drag slide promote",
	"move":       "bump shift park shove drag slide",
	"complete":   "cross tick wrap knock nail",
	"close":      "cross tick wrap knock nail",
	"resolve":    "fixed sorted",
	"code":       "fix version deploy",
	"deploy":     "live version",
	// undoing, restarting
	"rollback": "back revert broke worse previous undo",
	"undo":     "back revert broke worse previous",
	"restore":  "back undelete recover lost",
	"reboot":   "frozen hung stuck unresponsive cycle wedged hang freeze lock",
	"restart":  "frozen hung stuck unresponsive cycle wedged hang freeze lock",
	// looking at how a thing is doing
	"top":         "hog eat maxed usage memory ram cpu heavy pegged spike load resource consume gobble leak oom packed greedy",
	"stats":       "hog eat gobble usage memory ram cpu heavy pegged spike load resource consume leak oom greedy",
	"information": "memory ram usage leak",
	"metric":      "latency sluggish slow trend graph",
	"explain":     "slow ages crawl drag lag forever",
	"slow":        "ages forever sluggish culprit crawl drag lag",
	"flaky":       "random sometimes occasionally intermittent",
	"ping":        "reachable unreachable alive dead offline",
	"certificate": "private secure insecure padlock trusted warning https",
	"status":      "happen alive",
	"log":         "complain print happen wrong crash die fall fail error",
	"vacation":    "away leave holiday absent trip",
	"responder":   "away leave holiday absent",
	"statistics":  "average mean median spread deviation number crunch",
	"start":       "boot spin crank",
	"meeting":     "hop jump huddle hangout catch session sync",
	"event":       "sync retro standup session party dinner lunch",
	"list":        "rundown lineup roundup",
	"pause":       "stop hold freeze silence quiet",
	"share":       "anyone public company access",
	"edit":        "restyle retouch touch style filter tweak",
	"inventory":   "low restock count",
	"volume":      "loud quiet louder quieter blast blaring deafening hear",
	"queue":       "line next later afterwards",
	"comment":     "note mention",
	"permission":  "allowed denied",
	"compress":    "squeeze shrink smaller fit lighter slim",
	"upscale":     "grainy blurry pixelated fuzzy sharpen crisp bigger enlarge",
	"resize":      "shrink bigger smaller fit",
	"trim":        "snip chop clip shorten",
	"download":    "grab snag",
	"convert":     "turn",
	"translate":   "turn mean",
	"trigger":     "crank poke",
	"retry":       "redo another",
	"rerun":       "redo another",
	"scale":       "crank bump fewer replicas",
	"archive":     "shelve retire mothball",
	"merge":       "land squash combine",
	"assign":      "hand give pass owner",
	"invite":      "rope loop bring",
	"forward":     "pass relay",
	"reaction":    "thumbs emoji react",
	"pin":         "sticky",
	"mute":        "hush silence quiet snooze shush",
	"acknowledge": "ack",
	"refund":      "return",
	"star":        "bookmark favorite",
	"fork":        "clone",
	"transcribe":  "type",
	"speech":      "aloud loud narrate",
	"summary":     "gist short nutshell",
	"identify":    "name",
	"extract":     "rip",
	"crop":        "frame",
	"background":  "cutout transparent",
	"generate":    "draw sketch imagine dream",
	"detect":      "spot recognize",
	"ocr":         "scanned typed",
	"geocode":     "coordinates latitude longitude",
	"directions":  "drive walk",
	"air":         "smog pollution smoke breathe",
	"alerts":      "storm warning",
	"holidays":    "bank day",
	"sms":         "text",
	"call":        "ring dial phone",
	"whatsapp":    "text",
	"calculate":   "figure crunch work",
	"diff":        "compare difference",
	"commit":      "snapshot",
	"backup":      "snapshot safe",
	"exec":        "shell inside",
	"port":        "tunnel local",
	"upgrade":     "bump newer",
	"discount":    "coupon promo sale",
	"sales":       "revenue sold",
	"balance":     "left",
	"disputes":    "chargeback contest",
	"crypto":      "bitcoin ether coin",
	"quote":       "ticker",
	"financials":  "revenue earnings profit",
	"currency":    "exchange",
	"flight":      "delayed late landing",
	"hotel":       "room stay night",
	"uuid":        "unique",
	"hash":        "checksum fingerprint",
	"zip":         "bundle pack",
	"unzip":       "unpack",
	"tree":        "structure layout",
	"subtitles":   "captions",
	"stems":       "vocals instrumental karaoke",
	"screenshot":  "capture grab",
	"annotation":  "marker note mark",
	"incident":    "outage",
	"email":       "line",
	"task":        "todo chore errand",
	"issue":       "complaint",
	"ticket":      "complaint",
	"channel":     "room",
	"file":        "deck slides attachment paperwork",
	"playlist":    "mix mixtape",
	"video":       "clip footage",
	"document":    "writeup",
	"spreadsheet": "tab",
	"customer":    "shopper",
	"order":       "purchase",
	"dashboard":   "board panel graph chart",
	"workflow":    "build pipeline",
	"job":         "build",
	"repository":  "codebase",
	"deployment":  "service app",
	"fulfill":     "unshipped",
}

// actionTerms maps a stemmed word of tool names to the stemmed terms of
// nameTerms it adds to the tool's fieldAction.
var actionTerms = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string, len(nameTerms))
	for k, v := range nameTerms {
		for _, key := range terms(k) {
			for _, t := range strings.Fields(v) {
				m[key] = append(m[key], keyWord(t))
			}
		}
	}
	return m
})

// nameActions calls emit once with each term that the terms of a tool's
// name add to its fieldAction, using seen (returned) to drop repeats.
func nameActions(name []string, seen []string, emit func(string)) []string {
	table := actionTerms()
	for _, w := range name {
		for _, t := range table[w] {
			if !contains(seen, t) {
				seen = append(seen, t)
				emit(t)
			}
		}
	}
	return seen
}

func contains(s []string, t string) bool {
	for _, x := range s {
		if x == t {
			return true
		}
	}
	return false
}

// Domains. A tool's name starts with its service ("gmail_", "aws_") and,
// in a large service, its product ("aws_s3_", "aws_lambda_"): its domain.
// A request that names a brand or product ("in Gmail", "our S3 bucket",
// "on Teams") wants a tool of that domain, and a generic word it shares
// with another domain's tool ("record", "channel", "send") must not pull
// that tool above it: the tools of a named domain score domainBoost times
// more. A brand term is a domain's first name word, a tag or a product's
// word that few tools outside its domains use anywhere, so that "time", "search" or "chat", which are a domain's name or tag
// and everyday words too, are not brands.
var domainBoost = 1.3

// capitalBoost is domainBoost for a brand the request writes with a
// capital inside it ("notes in Notion", "the team on Teams"): a proper
// name, where a lower-case "team" may be the everyday word.
var capitalBoost = 1.6

// maxBrandDomains bounds how many domains one brand term may name
// ("google" names gmail, gcal, gdrive, ...): a term shared more widely is
// a category, not a brand.
const maxBrandDomains = 8

// domains assigns each tool its domain and product group and finds the
// brand terms that name them. groups are numbered from 1; 0 is none.
func (ix *Index) domains() {
	n := len(ix.tools)
	ix.docGroups = make([][2]int32, n)
	groupOf := map[string]int32{}
	group := func(key string) int32 {
		g, ok := groupOf[key]
		if !ok {
			g = int32(len(groupOf) + 1)
			groupOf[key] = g
		}
		return g
	}
	// The domain is the name's first segment; the product its first two
	// when at least two tools share them and the second is not a word of
	// other domains' names (gcal_delete_ is a verb, not a product).
	segs := make([][]string, n)
	pairCount := map[[2]string]int{}
	wordDomain := map[string]string{} // a name word's domain, "" if several
	for d, t := range ix.tools {
		s := strings.FieldsFunc(strings.ToLower(t.Name), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
		segs[d] = s
		if len(s) >= 3 {
			pairCount[[2]string{s[0], s[1]}]++
		}
		for _, w := range s[min(1, len(s)):] {
			if dom, ok := wordDomain[w]; !ok {
				wordDomain[w] = s[0]
			} else if dom != s[0] {
				wordDomain[w] = ""
			}
		}
	}
	nameWords := map[string]bool{}
	for w := range wordDomain {
		analyze(w, func(t string) { nameWords[t] = true })
	}
	tagNamed := map[string]bool{}
	// candidates maps a term to the groups it may name.
	candidates := map[string][]int32{}
	prefixes := map[string]bool{} // the terms of domains' names
	raw := map[string]bool{}      // the candidates as written, lower-cased
	addCandidate := func(text string, g int32) {
		raw[strings.ToLower(text)] = true
		analyze(text, func(t string) {
			if !contains32(candidates[t], g) {
				candidates[t] = append(candidates[t], g)
			}
		})
	}
	for d, t := range ix.tools {
		s := segs[d]
		if len(s) < 2 {
			continue
		}
		dom := group(s[0])
		ix.docGroups[d][0] = dom
		addCandidate(s[0], dom)
		analyze(s[0], func(t string) { prefixes[t] = true })
		for _, tag := range t.Tags {
			// A tag that is a word of tool names ("email", "ticket") says
			// what tools do, not whose they are.
			named, ok := tagNamed[tag]
			if !ok {
				named = slices.ContainsFunc(terms(tag), func(t string) bool { return nameWords[t] })
				tagNamed[tag] = named
			}
			if !named {
				addCandidate(tag, dom)
			}
		}
		if len(s) >= 3 && pairCount[[2]string{s[0], s[1]}] >= 2 && wordDomain[s[1]] != "" {
			prod := group(s[0] + "_" + s[1])
			ix.docGroups[d][1] = prod
			addCandidate(s[1], prod)
		}
	}
	// Brands are written with a capital inside a sentence ("in a GitHub
	// repository", "an S3 bucket"), everyday words are not ("the error").
	caps := capitalized(ix.tools, raw)
	inGroups := func(d int32, gs []int32) bool {
		return contains32(gs, ix.docGroups[d][0]) || contains32(gs, ix.docGroups[d][1])
	}
	ix.brands = map[string][]int32{}
	for t, gs := range candidates {
		if len(gs) > maxBrandDomains || caps[t] <= 0 && !prefixes[t] {
			continue
		}
		id, ok := ix.terms[t]
		if !ok {
			continue
		}
		inside, outside := 0, 0
		for _, p := range ix.postings[id] {
			if inGroups(p.doc, gs) {
				inside++
			} else {
				outside++
			}
		}
		if outside <= max(2, inside/4) {
			ix.brands[t] = gs
		}
	}
}

func contains32(s []int32, x int32) bool {
	for _, y := range s {
		if y == x && x != 0 {
			return true
		}
	}
	return false
}

// capitalized returns, for the terms of each of words (lower-case), how
// many more times the tools' descriptions write it with a capital inside
// a sentence than in lower case. Only the given words are counted: the
// descriptions are not analyzed again.
func capitalized(tools []*wield.Tool, words map[string]bool) map[string]int {
	byWord := map[string]int{}
	for _, t := range tools {
		start := true
		desc := t.Description
		for desc != "" {
			i := strings.IndexFunc(desc, unicode.IsSpace)
			if i < 0 {
				i = len(desc)
			}
			f := desc[:i]
			desc = strings.TrimLeftFunc(desc[i:], unicode.IsSpace)
			if f == "" {
				continue
			}
			w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
			if w != "" {
				r, _ := utf8.DecodeRuneInString(w)
				upper := unicode.IsUpper(r)
				if upper {
					w = strings.ToLower(w)
				}
				if words[w] {
					switch {
					case upper && !start:
						byWord[w]++
					case !upper:
						byWord[w]--
					}
				}
			}
			start = strings.ContainsAny(f[len(f)-1:], ".!?:")
		}
	}
	m := make(map[string]int, len(byWord))
	for w, n := range byWord {
		analyze(w, func(t string) { m[t] += n })
	}
	return m
}

// namedBrands returns the groups that the brand terms of a query name
// (among its words as written, not their related terms, nor a verb's -ing
// or past form) and, of those,
// the groups of brands written with a capital after the query's first
// word.
func (ix *Index) namedBrands(query string, qterms []qterm) (named, capital []int32) {
	if len(ix.brands) == 0 {
		return nil, nil
	}
	for _, q := range qterms {
		gs := ix.brands[q.group[0]]
		if q.weight < 1 || len(gs) == 0 || onlyInflected(query, q.group[0]) {
			continue
		}
		named = append(named, gs...)
	}
	if len(named) == 0 {
		return nil, nil
	}
	return named, ix.capitalBrands(query)
}

// onlyInflected reports whether the words of query that have term t are
// all a verb's -ing or past form: "driving" names no product, though the
// stemmer makes it Drive's term.
func onlyInflected(query, t string) bool {
	has := func(inflected bool) bool {
		found := false
		words(query, func(w string) {
			if !found && isInflected(w) == inflected {
				analyze(w, func(x string) { found = found || x == t })
			}
		})
		return found
	}
	return has(true) && !has(false)
}

// isInflected reports whether a word is a verb's -ing or past form.
func isInflected(w string) bool {
	lower := strings.ToLower(w)
	return isPast(lower) || len(lower) > 5 && strings.HasSuffix(lower, "ing")
}

// capitalBrands returns the groups of the brands a query writes with a
// capital after its first word.
func (ix *Index) capitalBrands(query string) (capital []int32) {
	first := true
	words(query, func(w string) {
		r, _ := utf8.DecodeRuneInString(w)
		if !first && unicode.IsUpper(r) {
			analyze(w, func(t string) { capital = append(capital, ix.brands[t]...) })
		}
		first = false
	})
	return capital
}
