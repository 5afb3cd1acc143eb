// Package toolsearch finds tools in a large catalog, so that a model can be
// offered one search_tools tool instead of hundreds of definitions that
// would flood its context.
//
// # Searching
//
// [New] indexes tools once; [Index.Search] ranks them for a query in plain
// words ("open a bug about the login page crashing") with BM25F over four
// fields: the tool's name (split on _, -, . and camelCase), its tags and
// category, its description, and its parameters' names, descriptions and
// enum values. Words are lower-cased, stemmed lightly and matched against
// a small table of general-purpose synonyms (create/add/new/make,
// delete/remove, issue/bug/ticket, ...). A query also searches for the kind
// of the values it quotes (an email address, a phone number, a host name,
// "Spanish", "miles"), for one-word forms of phrasal verbs ("look up",
// "shut down"), for compounds the catalog uses ("on call" for "oncall"),
// and, at a third of a word's weight, for the terms its words relate to:
// the action an idiom names ("jot down" a note, "bounce" a service), the
// remedy of a symptom ("flaky" tests, a "full" disk to prune), a domain's
// term for an everyday word ("outage" an incident), and, at a quarter,
// what WordNet relates an everyday word to ("junk" is discard and trash;
// see wordnet.go). Irregular verbs are made regular ("dug" is "dig"), and
// a phrasal verb matches with its object inside ("kick them out").
// Each word of a tool's name brings the everyday words of its action or
// object class into a field of its own ("scrap" finds a delete tool,
// "bucks" a payout; see nameTerms), and a brand or product a query names
// ("Gmail", "S3"; not a verb's -ing or past form: "driving" is not Drive)
// boosts its domain's tools (see domainBoost). A query's
// first meaningful word weighs more (see leadWeight), and a verb in the
// past after a subject pronoun less (see describedWeight), and so do words
// in quotes, a value for the tool rather than the request (see
// quotedWeight).
//
// Other ways of ranking were measured on every set of test requests, each
// set in turn held out (TestRelevanceLeaveOneOut; 284 of 310 requests find
// the right tool in the top 3 as shipped), and dropped, as none raised the
// figure of a set it was not chosen on: pseudo-relevance feedback (271 to
// 280), an idf discounted by how many domains use the term (279 to 283),
// a share of the tool's domain's score added to it (283 to 285, the gain
// on one set only), related terms scoring only tools a written word
// matched (281). Their code is in commit befe2fb, to run again.
//
// # Searching within a toolkit
//
// A search_tools call made within an agent's toolkit searches that
// toolkit, so one registered tool serves every agent (see [Tool]).
//
// # Loading tools on demand
//
// [Tool] returns the search_tools tool. Its result carries each match's
// name, description and input schema, so an agent loop can add the chosen
// definitions to the model's tool list for the next turn. [Catalog] decides
// whether a toolkit is large enough to be hidden behind search_tools.
package toolsearch

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

// The fields of a tool, by index into the weights.
const (
	fieldName = iota
	fieldTags
	fieldDesc
	fieldParams
	fieldAction // the everyday words of the name's words (see nameTerms)
	numFields
)

// BM25F parameters. The name says most about a tool in the fewest words,
// so it weighs most; parameters describe inputs rather than the purpose
// and weigh least. b is the length normalization of each field; the class
// words of a name (fieldAction) are not normalized, so that a name with
// more of them (delete has many everyday words) is not penalized.
var (
	fieldWeight = [numFields]float64{fieldName: 3.0, fieldTags: 1.5, fieldDesc: 1.0, fieldParams: 0.4, fieldAction: 1.4}
	fieldB      = [numFields]float64{fieldName: 0.3, fieldTags: 0.3, fieldDesc: 0.75, fieldParams: 0.75, fieldAction: 0}
)

const k1 = 1.2

// synonymWeight discounts a match on a synonym against one on the word the
// user wrote.
var synonymWeight float32 = 0.5

// posting is one tool's weighted, length-normalized frequency of a term,
// summed over the fields.
type posting struct {
	doc int32
	tf  float32
}

// Index ranks a fixed set of tools against queries. It is immutable once
// built and safe for concurrent use; build a new one when the tools change
// (see [Cache]).
type Index struct {
	tools    []*wield.Tool
	terms    map[string]int32
	postings [][]posting
	byName   map[string]int32
	scratch  sync.Pool
	// docGroups are each tool's domain and product group (see domains),
	// brands the groups each brand term names.
	docGroups [][2]int32
	brands    map[string][]int32
	// plain leaves the related-term tables out of queries: the reference
	// of the benchmarks, not an option.
	plain bool
	// table, when not nil, replaces the related-term tables: the tests'
	// measure of each table alone.
	table relatedTable
}

// Hit is one tool found by a search, with its score (higher is better; the
// scale depends on the query and the catalog, so compare scores only within
// one result).
type Hit struct {
	Tool  *wield.Tool
	Score float64
}

// New indexes tools. Nil tools and tools that cannot be called (disabled
// or held) are left out: a model could not use them. Building takes time
// linear in the total number of words of the definitions. The index keeps
// the tools; they must not be modified afterwards, as registered tools are
// not.
func New(tools []*wield.Tool) *Index {
	ix := &Index{terms: map[string]int32{}, byName: map[string]int32{}}
	for _, t := range tools {
		if t == nil || !t.Callable() {
			continue
		}
		if _, dup := ix.byName[t.Name]; dup {
			continue
		}
		ix.byName[t.Name] = int32(len(ix.tools))
		ix.tools = append(ix.tools, t)
	}

	// First pass: raw frequencies per field, and field lengths.
	type raw struct {
		doc int32
		tf  [numFields]uint16
	}
	var rawPost [][]raw
	lengths := make([][numFields]int32, len(ix.tools))
	var total [numFields]float64
	var seen, actions []string // per tool, reused
	for d, t := range ix.tools {
		doc := int32(d)
		add := func(f int) func(string) {
			return func(term string) {
				id, ok := ix.terms[term]
				if !ok {
					id = int32(len(rawPost))
					ix.terms[term] = id
					rawPost = append(rawPost, nil)
				}
				p := rawPost[id]
				if n := len(p); n == 0 || p[n-1].doc != doc {
					p = append(p, raw{doc: doc})
				}
				if p[len(p)-1].tf[f] < math.MaxUint16 {
					p[len(p)-1].tf[f]++
				}
				rawPost[id] = p
				lengths[d][f]++
			}
		}
		// A name's words count once: "weather_current_weather" repeats its
		// prefix, not its subject.
		name := add(fieldName)
		seen = seen[:0]
		analyze(t.Name, func(term string) {
			if !slices.Contains(seen, term) {
				seen = append(seen, term)
				name(term)
			}
		})
		actions = nameActions(seen, actions[:0], add(fieldAction))
		tags := add(fieldTags)
		for _, tag := range t.Tags {
			analyze(tag, tags)
		}
		analyze(string(t.Category), tags)
		// Quoted text in a description is an example of an input ("Lunch
		// with Sam tomorrow"), not what the tool does: it weighs as a
		// parameter's words.
		for i, part := range strings.Split(t.Description, `"`) {
			if i%2 == 1 && i < strings.Count(t.Description, `"`) {
				analyze(part, add(fieldParams))
			} else {
				analyze(part, add(fieldDesc))
			}
		}
		params(t.InputSchema, add(fieldParams), 0)
		for f := range numFields {
			total[f] += float64(lengths[d][f])
		}
	}

	// Second pass: fold the fields into one BM25F frequency per posting.
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = 1
		if len(ix.tools) > 0 && total[f] > 0 {
			avg[f] = total[f] / float64(len(ix.tools))
		}
	}
	ix.postings = make([][]posting, len(rawPost))
	for id, rp := range rawPost {
		ps := make([]posting, len(rp))
		for i, r := range rp {
			var tf float64
			for f := range numFields {
				if r.tf[f] == 0 {
					continue
				}
				norm := 1 - fieldB[f] + fieldB[f]*float64(lengths[r.doc][f])/avg[f]
				tf += fieldWeight[f] * float64(r.tf[f]) / norm
			}
			ps[i] = posting{doc: r.doc, tf: float32(tf)}
		}
		ix.postings[id] = ps
	}
	ix.domains()
	ix.scratch.New = func() any {
		return &scratch{score: make([]float64, len(ix.tools)), tf: make([]float32, len(ix.tools))}
	}
	return ix
}

// maxParamDepth bounds the walk of nested parameter schemas: deep levels
// describe data, not what the tool is for.
const maxParamDepth = 3

// params emits the terms of a schema's property names, titles,
// descriptions and enum values, nested objects and arrays included.
func params(s *jsonschema.Schema, emit func(string), depth int) {
	if s == nil || depth > maxParamDepth {
		return
	}
	if depth > 0 {
		analyze(s.Title, emit)
		analyze(s.Description, emit)
		for _, v := range s.Enum {
			if str, ok := v.(string); ok {
				analyze(str, emit)
			}
		}
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names) // the order of terms does not matter, but determinism helps debugging
	for _, name := range names {
		analyze(name, emit)
		params(s.Properties[name], emit, depth+1)
	}
	params(s.Items, emit, depth+1)
}

// Len returns the number of tools in the index.
func (ix *Index) Len() int { return len(ix.tools) }

// Tools returns the indexed tools, in the order they were given.
func (ix *Index) Tools() []*wield.Tool { return slices.Clone(ix.tools) }

// scratch is the per-search working memory, pooled: one score and one
// frequency slot per tool, and the lists of slots in use so that clearing
// costs what the search touched rather than the catalog's size.
type scratch struct {
	score   []float64
	tf      []float32
	touched []int32 // docs with a score
	pending []int32 // docs with a frequency for the current query term
}

// Search returns the tools that best match query, best first, at most
// limit of them (all matches when limit <= 0). Ties are broken by name, so
// the order is deterministic. A query that names a tool exactly ranks that
// tool first. A query without a single meaningful word ("the", "please")
// finds nothing.
func (ix *Index) Search(query string, limit int) []Hit {
	hits, _ := ix.search(query, limit)
	return hits
}

// Count returns how many tools match query at all.
func (ix *Index) Count(query string) int {
	_, n := ix.search(query, 1)
	return n
}

// search returns the best limit hits and the number of tools that matched.
func (ix *Index) search(query string, limit int) ([]Hit, int) {
	return ix.searchExcept(query, limit, "")
}

// related returns the related-term table that queries are expanded with.
func (ix *Index) related() relatedTable {
	switch {
	case ix.plain:
		return nil
	case ix.table != nil:
		return ix.table
	}
	return related()
}

// exactName returns the tool a query names exactly, if any.
func (ix *Index) exactName(query string) (int32, bool) {
	d, ok := ix.byName[strings.TrimSpace(query)]
	return d, ok
}

// searchable reports whether a query can find anything: it has a
// meaningful word or names a tool.
func (ix *Index) searchable(query string) bool {
	_, ok := ix.exactName(query)
	return ok || len(queryTerms(query, nil, ix.related())) > 0
}

// searchExcept is search with the tool named except left out.
func (ix *Index) searchExcept(query string, limit int, except string) ([]Hit, int) {
	if len(ix.tools) == 0 {
		return nil, 0
	}
	qterms := queryTerms(query, ix.terms, ix.related())
	exact, hasExact := ix.exactName(query)
	if len(qterms) == 0 && !hasExact {
		return nil, 0
	}

	sc := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(sc)
	n := float64(len(ix.tools))
	for _, q := range qterms {
		// One pseudo-term per query word: the word and its synonyms pooled,
		// with the document frequency of the group's commonest member (as
		// Lucene's SynonymQuery does), so that a synonym never makes a
		// match look rarer than it is.
		df := 0
		for i, t := range q.group {
			id, ok := ix.terms[t]
			if !ok {
				continue
			}
			w := float32(1)
			if i > 0 {
				w = synonymWeight
			}
			ps := ix.postings[id]
			df = max(df, len(ps))
			for _, p := range ps {
				if sc.tf[p.doc] == 0 {
					sc.pending = append(sc.pending, p.doc)
				}
				sc.tf[p.doc] += w * p.tf
			}
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		for _, d := range sc.pending {
			tf := float64(sc.tf[d])
			sc.tf[d] = 0
			if sc.score[d] == 0 {
				sc.touched = append(sc.touched, d)
			}
			sc.score[d] += q.weight * idf * tf / (k1 + tf)
		}
		sc.pending = sc.pending[:0]
	}
	// A named brand's tools rank above other domains' (see domainBoost).
	named, capital := ix.namedBrands(query, qterms)
	if len(named) > 0 {
		for _, d := range sc.touched {
			g := ix.docGroups[d]
			switch {
			case contains32(capital, g[0]) || contains32(capital, g[1]):
				sc.score[d] *= capitalBoost
			case contains32(named, g[0]) || contains32(named, g[1]):
				sc.score[d] *= domainBoost
			}
		}
	}
	if hasExact {
		best := 0.0
		for _, d := range sc.touched {
			best = max(best, sc.score[d])
		}
		if sc.score[exact] == 0 {
			sc.touched = append(sc.touched, exact)
		}
		sc.score[exact] = best + 1
	}

	matched := len(sc.touched)
	if d, ok := ix.byName[except]; ok && except != "" && sc.score[d] != 0 {
		sc.score[d] = -1 // top skips it; the reset below still clears it
		matched--
	}
	hits := ix.top(sc, limit)
	for _, d := range sc.touched {
		sc.score[d] = 0
	}
	sc.touched = sc.touched[:0]
	return hits, matched
}

// better orders hits best first: higher score, then name.
func better(a, b Hit) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return strings.Compare(a.Tool.Name, b.Tool.Name)
}

// top selects the best limit scored tools. For a small limit it keeps a
// sorted window of the best so far, which costs one comparison per match
// for most matches; otherwise it sorts all matches.
func (ix *Index) top(sc *scratch, limit int) []Hit {
	if limit <= 0 || limit > len(sc.touched) {
		limit = len(sc.touched)
	}
	if limit == 0 {
		return nil
	}
	if limit > 32 {
		hits := make([]Hit, 0, len(sc.touched))
		for _, d := range sc.touched {
			if sc.score[d] >= 0 {
				hits = append(hits, Hit{Tool: ix.tools[d], Score: sc.score[d]})
			}
		}
		slices.SortFunc(hits, better)
		return hits[:min(limit, len(hits))]
	}
	hits := make([]Hit, 0, limit)
	for _, d := range sc.touched {
		if sc.score[d] < 0 {
			continue
		}
		h := Hit{Tool: ix.tools[d], Score: sc.score[d]}
		if len(hits) == limit {
			if better(h, hits[limit-1]) >= 0 {
				continue
			}
			hits = hits[:limit-1]
		}
		i, _ := slices.BinarySearchFunc(hits, h, better)
		hits = slices.Insert(hits, i, h)
	}
	return hits
}

// qterm is one distinct word of a query: its term first, then its
// synonyms, and how often the query says it.
type qterm struct {
	group  []string
	weight float64
}

// entity is a kind of value a user pastes into a request, which says what
// kind of tool it needs.
type entity struct {
	re   *regexp.Regexp
	term string
}

// entities are compiled on first use (see stopWords).
var entities = sync.OnceValue(func() []entity {
	return []entity{
		{regexp.MustCompile(`[\w.+-]+@[\w-]+\.[\w.-]+`), "email"},
		{regexp.MustCompile(`\bhttps?://\S+`), "url"},
		{regexp.MustCompile(`(?:^|\s)\+\d[\d ()-]{6,}\d\b`), "phone"},
		{regexp.MustCompile(`\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`), "ip"},
		// A host name, after the URLs and addresses that hold one.
		{regexp.MustCompile(`(?i)\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|org|net|io|dev|app|co|ai|me|info|biz|cloud|site|shop|uk|de|fr|eu|nl|es|it|jp|us|ca|au)\b`), "domain"},
	}
})

// queryTerms analyzes a query into its distinct terms with their synonyms:
// its words, the kinds of the values it quotes (an email address, a URL, a
// phone number, an IP address, a host name), withRelated the terms its
// words relate to (see relatedTerms), and, when vocab is not nil, the compounds of
// two adjacent words that vocab knows ("on call" finds "oncall", "data
// base" finds "database").
func queryTerms(query string, vocab map[string]int32, table relatedTable) []qterm {
	var out []qterm
	index := map[string]int{}
	syn, classes, stops := synonyms(), valueClasses(), stopWords()
	addWeighted := func(t string, w float64) {
		if i, ok := index[t]; ok {
			out[i].weight += w
			return
		}
		index[t] = len(out)
		group := make([]string, 0, 1+len(syn[t]))
		group = append(group, t)
		group = append(group, syn[t]...)
		out = append(out, qterm{group: group, weight: w})
	}
	add := func(t string) { addWeighted(t, 1) }
	for _, e := range entities() {
		// The value itself ("bob@example.com") is noise to the search.
		if e.re.MatchString(query) {
			analyze(e.term, add)
			query = e.re.ReplaceAllString(query, " ")
		}
	}
	// Quoted text is a value the tool is to use ("tick off 'buy milk'",
	// "a task 'call the caterer'"), not what the request asks for.
	if quotedWeight != 1 && strings.ContainsAny(query, `'"‘“`) {
		query = quoted().ReplaceAllStringFunc(query, func(m string) string {
			words(m, func(word string) {
				analyze(word, func(t string) { addWeighted(t, quotedWeight) })
			})
			return " "
		})
	}
	var subject bool // the previous word is a subject pronoun
	first := true    // no meaningful word yet
	words(query, func(word string) {
		w := 1.0
		lower := strings.ToLower(word)
		if subject && isPast(lower) {
			w = describedWeight // "the message I posted": posted is not the request
		}
		// A stop word, or a letter left of a contraction ("it's", "don't"),
		// is not meaningful (see term).
		if first && !stops[lower] && (len(lower) > 1 || isDigits(lower)) {
			first = false
			w = leadWeight // "dig up the thread": an imperative's verb comes first
		}
		subject = subjects[lower]
		analyze(word, func(t string) {
			addWeighted(t, w)
			if class, ok := classes[t]; ok {
				addWeighted(class, w)
			}
		})
	})
	relatedOf(table, query, addWeighted)
	var prev string
	words(query, func(w string) {
		w = strings.ToLower(w)
		if prev != "" {
			if long, ok := phrases[prev+" "+w]; ok {
				analyze(long, add)
			}
			// Two stop words ("who is", "I am") make no compound, nor does
			// a word with its possessive's s ("customer's" is customer,
			// once).
			if !stops[prev] || !stops[w] {
				if c := stem(prev + w); vocabHas(vocab, c) && c != stem(prev) && c != stem(w) {
					add(c)
				}
			}
		}
		prev = w
	})
	return out
}

// quotedWeight is the weight of a word inside quotes (see quoted).
var quotedWeight = 0.3

// quoted matches text in quotes: a quote after a space, a parenthesis or
// the start, the text (no quote inside, at most 200 bytes), and a quote
// before a space, a punctuation mark or the end; an apostrophe inside a
// word ("it's", "Maria's") starts nothing.
var quoted = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s(])['"‘“][^'"‘’“”]{1,200}['"’”](?:$|[\s.,;:!?)])`)
})

// subjects are the pronouns that, followed by a verb in the past, make
// it a description of the request's object ("the email I drafted", "the
// thread where we argued", "the file they sent") rather than what the
// request asks for; "you" is not one ("could you send").
var subjects = map[string]bool{
	"i": true, "we": true, "they": true, "he": true, "she": true, "someone": true, "somebody": true,
	"everyone": true, "ve": true, "d": true,
}

// leadWeight is the weight of a query's first meaningful word: a request
// is most often an imperative, whose verb comes first ("scrap my 3pm
// sync", "dig up the thread"), or names its subject first ("Spotify is
// too loud", "the disk is full").
var leadWeight = 1.5

// describedWeight is the weight of a verb that describes the request's
// object (see subjects).
var describedWeight = 0.4

// isPast reports whether a lower-case word is a verb's past form: a
// regular one ("posted") or an irregular one that is not also the verb
// ("sent", "dug"; not "put").
func isPast(w string) bool {
	if base, ok := irregularVerbs[w]; ok {
		return base != w
	}
	return len(w) > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed")
}

func vocabHas(vocab map[string]int32, t string) bool {
	_, ok := vocab[t]
	return ok
}
