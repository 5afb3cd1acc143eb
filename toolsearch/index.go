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
	// termDomains is the number of domains each term occurs in;
	// numDomains the number of domains.
	termDomains []int32
	numDomains  int
	// docTerms are each tool's terms (posting.doc is the term's id) with
	// their BM25F frequency: the forward index that pseudo-relevance
	// feedback reads, built on its first use.
	docTerms     [][]posting
	docTermsOnce sync.Once
	// alt, when not zero, turns on ranking layers that were measured and
	// left out (see alternatives): the tests' measure of each.
	alt alternatives
}

// alternatives are ways of ranking that were measured on every set of
// requests, each in turn held out (TestRelevanceLeaveOneOut), and left out
// of the shipped ranking because none raised the figure of a set it was
// not chosen on; the zero value is the shipped ranking.
type alternatives struct {
	// Pseudo-relevance feedback (RM3-style): the prfTerms terms that
	// best distinguish the first pass's prfDocs best tools are added to
	// the query, the best at prfWeight, and the tools scored again.
	prfDocs, prfTerms int
	prfWeight         float64
	// spread raises to this power a factor (at most 1) that discounts a
	// term's idf by the number of domains whose tools use it.
	spread float64
	// coherence adds to each tool this share of its domain's score: the
	// sum over the query's terms of the term's best contribution to a tool
	// of the domain.
	coherence float64
	// gate lets terms that only the related-term tables added score only
	// tools that a term of the query itself matched.
	gate bool
	// anyForm lets a verb's -ing or past form name a brand (see
	// namedBrands).
	anyForm bool
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
	ix.countDomains()
	ix.scratch.New = func() any {
		return &scratch{score: make([]float64, len(ix.tools)), tf: make([]float32, len(ix.tools)),
			domScore: make([]float64, ix.numDomains+1), domTerm: make([]float64, ix.numDomains+1)}
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
	score []float64
	tf    []float32
	// domScore sums, per domain, each query term's best contribution to
	// one of its tools; domTerm is the current term's.
	domScore   []float64
	domTerm    []float64
	domTouched []int32
	touched    []int32 // docs with a score
	pending    []int32 // docs with a frequency for the current query term
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
	for _, q := range qterms {
		if !ix.alt.gate || !q.related {
			ix.scoreTerm(sc, q.group, q.weight, false)
		}
	}
	if ix.alt.gate {
		for _, q := range qterms {
			if q.related {
				ix.scoreTerm(sc, q.group, q.weight, true)
			}
		}
	}
	ix.addCoherence(sc)
	named, capital := ix.namedBrands(query, qterms)
	if ix.alt.prfDocs > 0 && ix.alt.prfTerms > 0 {
		ix.feedback(sc, qterms, named, capital)
	}
	// A named brand's tools rank above other domains' (see domainBoost).
	if len(named) > 0 {
		for _, d := range sc.touched {
			sc.score[d] *= ix.brandFactor(d, named, capital)
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
	// related is set when only the related-term tables added the term.
	related bool
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
	relatedOf(table, query, func(t string, w float64) {
		_, had := index[t]
		addWeighted(t, w)
		if !had {
			out[index[t]].related = true
		}
	})
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

// scoreTerm adds to the scores of sc the BM25F contribution of one query
// word: the word and its synonyms pooled, with the document frequency of
// the group's commonest member (as Lucene's SynonymQuery does), so that a
// synonym never makes a match look rarer than it is.
func (ix *Index) scoreTerm(sc *scratch, group []string, weight float64, matchedOnly bool) {
	n := float64(len(ix.tools))
	df, dd := 0, int32(0)
	for i, t := range group {
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
		dd = max(dd, ix.termDomains[id])
		for _, p := range ps {
			if matchedOnly && sc.score[p.doc] == 0 {
				continue
			}
			if sc.tf[p.doc] == 0 {
				sc.pending = append(sc.pending, p.doc)
			}
			sc.tf[p.doc] += w * p.tf
		}
	}
	if df == 0 {
		return
	}
	idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
	if ix.alt.spread != 0 && ix.numDomains > 1 {
		nd := float64(ix.numDomains)
		top := math.Log(1 + (nd-0.5)/1.5)
		idf *= math.Pow(math.Log(1+(nd-float64(dd)+0.5)/(float64(dd)+0.5))/top, ix.alt.spread)
	}
	coherent := ix.alt.coherence != 0
	for _, d := range sc.pending {
		tf := float64(sc.tf[d])
		sc.tf[d] = 0
		if sc.score[d] == 0 {
			sc.touched = append(sc.touched, d)
		}
		c := weight * idf * tf / (k1 + tf)
		sc.score[d] += c
		if !coherent {
			continue
		}
		if dom := ix.docGroups[d][0]; dom != 0 {
			if sc.domTerm[dom] == 0 {
				sc.domTouched = append(sc.domTouched, dom)
			}
			sc.domTerm[dom] = max(sc.domTerm[dom], c)
		}
	}
	sc.pending = sc.pending[:0]
	for _, dom := range sc.domTouched {
		sc.domScore[dom] += sc.domTerm[dom]
		sc.domTerm[dom] = 0
	}
	sc.domTouched = sc.domTouched[:0]
}

// addCoherence adds to each scored tool its domain's score times the
// coherence weight, and clears the domains' scores.
func (ix *Index) addCoherence(sc *scratch) {
	if ix.alt.coherence == 0 {
		return
	}
	for _, d := range sc.touched {
		if dom := ix.docGroups[d][0]; dom != 0 {
			sc.score[d] += ix.alt.coherence * sc.domScore[dom]
		}
	}
	clear(sc.domScore)
}

// brandFactor is the factor of a tool's score for the brands a query
// names (see domainBoost).
func (ix *Index) brandFactor(d int32, named, capital []int32) float64 {
	g := ix.docGroups[d]
	switch {
	case contains32(capital, g[0]) || contains32(capital, g[1]):
		return capitalBoost
	case contains32(named, g[0]) || contains32(named, g[1]):
		return domainBoost
	}
	return 1
}

// countDomains counts the domains and each term's domains.
func (ix *Index) countDomains() {
	ix.termDomains = make([]int32, len(ix.postings))
	maxDom := int32(0)
	for _, g := range ix.docGroups {
		maxDom = max(maxDom, g[0])
	}
	ix.numDomains = int(maxDom)
	seen := make([]int32, maxDom+1)
	for id, ps := range ix.postings {
		for _, p := range ps {
			if dom := ix.docGroups[p.doc][0]; dom != 0 && seen[dom] != int32(id)+1 {
				seen[dom] = int32(id) + 1
				ix.termDomains[id]++
			}
		}
		if ix.termDomains[id] == 0 {
			ix.termDomains[id] = 1
		}
	}
}

// feedback expands the query with the terms that distinguish its best
// first-pass tools (pseudo-relevance feedback, as RM3 does) and adds their
// scores.
func (ix *Index) feedback(sc *scratch, qterms []qterm, named, capital []int32) {
	ix.docTermsOnce.Do(func() {
		ix.docTerms = make([][]posting, len(ix.tools))
		for id, ps := range ix.postings {
			for _, p := range ps {
				ix.docTerms[p.doc] = append(ix.docTerms[p.doc], posting{doc: int32(id), tf: p.tf})
			}
		}
	})
	k := ix.alt.prfDocs
	type doc struct {
		d int32
		s float64
	}
	var best []doc
	for _, d := range sc.touched {
		s := sc.score[d]
		if len(named) > 0 {
			s *= ix.brandFactor(d, named, capital)
		}
		best = append(best, doc{d, s})
	}
	slices.SortFunc(best, func(a, b doc) int { return cmp.Or(cmp.Compare(b.s, a.s), cmp.Compare(a.d, b.d)) })
	best = best[:min(k, len(best))]
	total := 0.0
	for _, b := range best {
		total += b.s
	}
	if total == 0 {
		return
	}
	inQuery := map[int32]bool{}
	for _, q := range qterms {
		for _, t := range q.group {
			if id, ok := ix.terms[t]; ok {
				inQuery[id] = true
			}
		}
	}
	n := float64(len(ix.tools))
	weight := map[int32]float64{}
	for _, b := range best {
		for _, p := range ix.docTerms[b.d] {
			if inQuery[p.doc] {
				continue
			}
			df := float64(len(ix.postings[p.doc]))
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			tf := float64(p.tf)
			weight[p.doc] += b.s / total * tf / (k1 + tf) * idf
		}
	}
	type term struct {
		id int32
		w  float64
	}
	var ts []term
	for id, w := range weight {
		ts = append(ts, term{id, w})
	}
	slices.SortFunc(ts, func(a, b term) int { return cmp.Or(cmp.Compare(b.w, a.w), cmp.Compare(a.id, b.id)) })
	ts = ts[:min(ix.alt.prfTerms, len(ts))]
	if len(ts) == 0 {
		return
	}
	for _, t := range ts {
		ix.scoreID(sc, t.id, ix.alt.prfWeight*t.w/ts[0].w)
	}
}

// scoreID is scoreTerm for one indexed term, by id.
func (ix *Index) scoreID(sc *scratch, id int32, weight float64) {
	n := float64(len(ix.tools))
	ps := ix.postings[id]
	df := float64(len(ps))
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	for _, p := range ps {
		tf := float64(p.tf)
		if sc.score[p.doc] == 0 {
			sc.touched = append(sc.touched, p.doc)
		}
		sc.score[p.doc] += weight * idf * tf / (k1 + tf)
	}
}
