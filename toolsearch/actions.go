package toolsearch

import (
	"strings"
	"sync"
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
	"create":   "whip rustle knock pencil spin set put start draw",
	"add":      "stick tack throw pop slap toss put pencil jot",
	"new":      "whip rustle",
	"schedule": "pencil slot book line",
	"book":     "reserve grab snag",
	"quick":    "pencil jot",
	"draft":    "scribble jot",
	// removing, cancelling
	"delete": "scrap axe ditch drop nix bin toss kill junk scrub wipe nuke chuck lose",
	"remove": "scrap axe ditch drop nix toss kill junk scrub wipe nuke lose",
	"trash":  "bin chuck toss junk ditch scrap",
	"cancel": "scrap axe nix drop kill call scrub",
	"stop":   "kill halt pause freeze",
	"ban":    "kick boot block",
	"prune":  "junk clutter leftover dangling full eat space disk free clean bloat",
	"purge":  "stale old outdated yesterday refresh flush",
	"cache":  "stale old outdated yesterday",
	// finding, reading, listing
	"search":  "dig hunt fish track look locate comb scour turn pull",
	"find":    "dig hunt fish track look locate",
	"grep":    "hunt dig where occurrence",
	"get":     "pull grab fetch",
	"read":    "pull open",
	"contact": "number phone person",
	// storing, sending, paying
	"upload":   "stash stick chuck drop stow park file squirrel save store",
	"put":      "stash stick chuck drop stow park file squirrel save store",
	"send":     "shoot ping drop fire",
	"post":     "shoot ping drop fire",
	"message":  "ping note word line",
	"payout":   "money buck cash dollar pay wire transfer",
	"pay":      "money buck cash dollar wire",
	"payment":  "money buck cash dollar",
	"transfer": "wire",
	// changing, moving, finishing
	"update":     "change bump swap tweak fix new version",
	"set":        "change swap switch turn",
	"transition": "move bump advance push status column stage",
	"move":       "bump shift park shove",
	"complete":   "cross tick check finish",
	"close":      "cross tick check finish",
	"resolve":    "fixed sorted",
	"code":       "fix version",
	"deploy":     "ship push live version",
	// undoing, restarting
	"rollback": "back revert broke worse previous undo",
	"undo":     "back revert broke worse previous",
	"restore":  "back undelete recover",
	"reboot":   "frozen hung stuck unresponsive kick bounce cycle wedged",
	"restart":  "frozen hung stuck unresponsive kick bounce cycle wedged",
	// looking at how a thing is doing
	"top":         "hog eat maxed usage memory ram cpu heavy",
	"stats":       "hog eat gobble usage memory ram cpu heavy",
	"information": "memory ram usage",
	"metric":      "latency sluggish slow trend graph",
	"explain":     "slow why ages plan",
	"slow":        "ages forever sluggish culprit",
	"flaky":       "random sometimes occasionally intermittent",
	"ping":        "reachable unreachable alive answer respond",
	"certificate": "private secure insecure padlock trusted warning https",
	"status":      "state happen",
	"log":         "complain say said print happen wrong",
	"vacation":    "away leave holiday absent",
	"responder":   "away leave holiday absent",
	"statistics":  "average mean median spread deviation number crunch",
	"fulfill":     "ship unshipped",
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

// nameActions calls emit once with each term that the words of a tool's
// name add to its fieldAction.
func nameActions(name string, emit func(string)) {
	table := actionTerms()
	var seen []string
	analyze(name, func(w string) {
		for _, t := range table[w] {
			if !contains(seen, t) {
				seen = append(seen, t)
				emit(t)
			}
		}
	})
}

func contains(s []string, t string) bool {
	for _, x := range s {
		if x == t {
			return true
		}
	}
	return false
}
