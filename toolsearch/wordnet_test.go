package toolsearch

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var wordnetDict = flag.String("wordnet", "",
	"WordNet 3.0 dict folder that wordnet.go is made from (default: what scripts/wordnet-up installs and prints, Debian's wordnet-base)")

var updateWordnet = flag.Bool("update-wordnet", false, "rewrite wordnet.go from the WordNet dict folder")

// The settings of the table: how many senses of a word are followed, most
// frequent first, and along which WordNet relations (hypernym, instance
// hypernym, derivation, verb group, similar, pertainym, also see,
// attribute).
const (
	wordnetSenses = 2
)

var wordnetPointers = []string{"@", "@i", "+", "$", "&", "\\", "^", "="}

// TestWordnetFile checks that wordnet.go is what the generator makes from
// WordNet and the package's own vocabulary, and rewrites it with
// -update-wordnet. WordNet comes from scripts/wordnet-up, which installs
// Debian's wordnet-base where it is missing. Where it cannot be had (no
// apt-get, no root, no network) the test skips, saying why, unless $CI is
// set: CI installs it, and there a missing WordNet is a failure.
func TestWordnetFile(t *testing.T) {
	dict := *wordnetDict
	if dict == "" {
		var err error
		if dict, err = wordnetUp(t); err != nil {
			wordnetMissing(t, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dict, "index.verb")); err != nil {
		wordnetMissing(t, fmt.Errorf("WordNet not found in %s: %w", dict, err))
	}
	got, err := generateWordnet(dict)
	if err != nil {
		t.Fatal(err)
	}
	if *updateWordnet {
		if err := os.WriteFile("wordnet.go", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("wordnet.go")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("wordnet.go is stale; run go test ./toolsearch/ -run TestWordnetFile -update-wordnet (-want +got):\n%s", diff)
	}
}

// wordnetUp runs scripts/wordnet-up and returns the folder it prints, or
// why it could not.
func wordnetUp(t *testing.T) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("..", "scripts", "wordnet-up"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/wordnet-up: %w\n%s", err, stderr.String())
	}
	dir := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(dir, '\n'); i >= 0 {
		dir = dir[i+1:]
	}
	return dir, nil
}

// wordnetMissing ends a test that needs WordNet when it cannot be had:
// skipped with the reason on a machine where Debian's wordnet-base cannot
// be installed, failed in CI ($CI set), whose scripts install it.
func wordnetMissing(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("WordNet is needed in CI (scripts/wordnet-up installs Debian's wordnet-base): %v", err)
	}
	t.Skipf("WordNet cannot be had here, so wordnet.go is not checked (CI checks it; give -wordnet a WordNet 3.0 dict folder to check it here): %v", err)
}

// toolVocabulary is the target side of the WordNet table: the words the
// package already knows as tool vocabulary (its synonym groups, the terms
// of its related-term table and phrases, the value classes), stemmed.
func toolVocabulary() map[string]bool {
	v := map[string]bool{}
	add := func(s string) { analyze(s, func(t string) { v[t] = true }) }
	for _, g := range synonymGroups {
		for _, w := range g {
			add(w)
		}
	}
	for _, terms := range relatedTerms() {
		add(terms)
	}
	for _, w := range phrases {
		add(w)
	}
	for _, c := range []string{"language", "unit", "currency", "date"} {
		add(c)
	}
	return v
}

type wnSynset struct {
	words []string
	ptrs  [][3]string // symbol, offset, part of speech
}

type wnEntry struct {
	lemma, pos string
	senses     []string // synset offsets, most frequent sense first
	tagged     bool     // seen in the sense-tagged corpus: a word in everyday use
}

// generateWordnet makes wordnet.go from the WordNet dict folder.
func generateWordnet(dict string) ([]byte, error) {
	vocab := toolVocabulary()
	syn := synonyms()
	follow := map[string]bool{}
	for _, p := range wordnetPointers {
		follow[p] = true
	}
	data := map[string]map[string]wnSynset{}
	index := map[string][]wnEntry{}
	everyday := map[string]bool{}
	for _, pos := range []string{"noun", "verb", "adj"} {
		d, err := readWordnetData(filepath.Join(dict, "data."+pos))
		if err != nil {
			return nil, err
		}
		data[pos[:1]] = d
		ix, err := readWordnetIndex(filepath.Join(dict, "index."+pos))
		if err != nil {
			return nil, err
		}
		index[pos] = ix
		for _, e := range ix {
			if e.tagged {
				everyday[e.lemma] = true
			}
		}
	}
	data["s"] = data["a"] // adjective satellites

	related := map[string]map[string]bool{}
	for _, pos := range []string{"noun", "verb", "adj"} {
		for _, e := range index[pos] {
			if !e.tagged {
				continue
			}
			key := strings.ReplaceAll(e.lemma, "_", " ")
			if ts := terms(key); len(ts) == 0 || (len(ts) == 1 && (vocab[ts[0]] || syn[ts[0]] != nil)) {
				continue // a stop word, or a word the package's own tables already cover
			}
			got := related[key]
			if got == nil {
				got = map[string]bool{}
			}
			keep := func(words []string) {
				for _, w := range words {
					w = strings.ToLower(w)
					if strings.Contains(w, "_") || w == key {
						continue
					}
					if ts := terms(w); len(ts) == 1 && vocab[ts[0]] {
						got[w] = true
					}
				}
			}
			for _, off := range e.senses[:min(wordnetSenses, len(e.senses))] {
				s := data[e.pos][off]
				keep(s.words)
				for _, p := range s.ptrs {
					if follow[p[0]] {
						keep(data[p[2]][p[1]].words)
					}
				}
			}
			if len(got) > 0 {
				related[key] = got
			}
		}
	}

	// Irregular verb forms ("dug", "sent", "wrote") of everyday verbs, which
	// the stemmer cannot undo; a form that is itself a word ("left",
	// "found", "saw") is left alone.
	irregular := map[string]string{}
	exc, err := os.ReadFile(filepath.Join(dict, "verb.exc"))
	if err != nil {
		return nil, fmt.Errorf("read verb.exc: %w", err)
	}
	for _, line := range strings.Split(string(exc), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || strings.Contains(line, "_") || everyday[f[0]] || !everyday[f[1]] {
			continue
		}
		if _, dup := irregular[f[0]]; !dup && stem(f[0]) != stem(f[1]) {
			irregular[f[0]] = f[1]
		}
	}

	// The table is written stemmed, as queries are matched against it, so
	// that a first search does not pay for analyzing it; forms that stem
	// alike ("design", "designs") pool their terms.
	stemmed := map[string]map[string]bool{}
	for k, ws := range related {
		var key []string
		words(k, func(w string) { key = append(key, keyWord(w)) })
		if len(key) == 0 {
			continue
		}
		sk := strings.Join(key, " ")
		if stemmed[sk] == nil {
			stemmed[sk] = map[string]bool{}
		}
		for w := range ws {
			for _, t := range terms(w) {
				stemmed[sk][t] = true
			}
		}
	}
	related = stemmed

	var b strings.Builder
	b.WriteString("// Code generated by TestWordnetFile from WordNet 3.0 (go test ./toolsearch/ -run TestWordnetFile -update-wordnet); DO NOT EDIT.\n\n")
	b.WriteString("package toolsearch\n\n")
	b.WriteString("// wordnetTerms maps an everyday English word or phrase to the words of\n// the package's tool vocabulary that WordNet relates it to, both stemmed.\n" +
		"// It builds the map on each call: the related table is built from it once,\n// on the first search, and a server that never searches never holds it.\n")
	b.WriteString("func wordnetTerms() map[string]string {\n\treturn map[string]string{\n")
	var prev byte
	for _, k := range slices.Sorted(mapsKeys(related)) {
		if k[0] != prev && prev != 0 {
			b.WriteString("\n") // gofmt aligns each letter's block on its own
		}
		prev = k[0]
		fmt.Fprintf(&b, "\t\t%s: %s,\n", strconv.Quote(k), strconv.Quote(strings.Join(slices.Sorted(mapsKeys(related[k])), " ")))
	}
	b.WriteString("\t}\n}\n\n")
	b.WriteString("// irregularVerbs maps irregular forms of everyday verbs to the verb.\n")
	b.WriteString("var irregularVerbs = map[string]string{\n")
	for _, k := range slices.Sorted(mapsKeys(irregular)) {
		fmt.Fprintf(&b, "\t%s: %s,\n", strconv.Quote(k), strconv.Quote(irregular[k]))
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// readWordnetIndex reads an index.pos file: lemma pos synset_cnt p_cnt
// [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
func readWordnetIndex(path string) ([]wnEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []wnEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue // the licence
		}
		fs := strings.Fields(line)
		if len(fs) < 6 {
			return nil, fmt.Errorf("%s:%d: %d fields", path, n, len(fs))
		}
		cnt, err1 := strconv.Atoi(fs[2])
		p, err2 := strconv.Atoi(fs[3])
		if err1 != nil || err2 != nil || len(fs) < 6+p+cnt {
			return nil, fmt.Errorf("%s:%d: malformed entry", path, n)
		}
		tagged, _ := strconv.Atoi(fs[5+p])
		out = append(out, wnEntry{lemma: fs[0], pos: fs[1], senses: fs[6+p : 6+p+cnt], tagged: tagged > 0})
	}
	return out, sc.Err()
}

// readWordnetData reads a data.pos file: offset lex_filenum ss_type w_cnt
// (word lex_id)... p_cnt (symbol offset pos source/target)... | gloss.
func readWordnetData(path string) (map[string]wnSynset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]wnSynset{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, " ") {
			continue
		}
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i]
		}
		fs := strings.Fields(line)
		if len(fs) < 5 {
			return nil, fmt.Errorf("%s:%d: %d fields", path, n, len(fs))
		}
		wc, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil || len(fs) < 5+2*int(wc) {
			return nil, fmt.Errorf("%s:%d: malformed synset", path, n)
		}
		var s wnSynset
		i := 4
		for range wc {
			w := fs[i]
			if j := strings.IndexByte(w, '('); j >= 0 { // adjective markers: (a), (p), (ip)
				w = w[:j]
			}
			s.words = append(s.words, w)
			i += 2
		}
		pc, err := strconv.Atoi(fs[i])
		if err != nil || len(fs) < i+1+4*pc {
			return nil, fmt.Errorf("%s:%d: malformed pointers", path, n)
		}
		i++
		for range pc {
			s.ptrs = append(s.ptrs, [3]string{fs[i], fs[i+1], fs[i+2]})
			i += 4
		}
		out[fs[0]] = s
	}
	return out, sc.Err()
}

func TestIrregularVerbs(t *testing.T) {
	// The stemmer cannot undo "wrote" or "dug"; the WordNet forms can.
	for _, tt := range []struct{ in, want string }{
		{"wrote", "writ"}, {"sent", "send"}, {"dug", "dig"}, {"took", "tak"}, {"threw", "throw"},
		{"left", "left"}, {"found", "found"}, // words of their own are kept
	} {
		if got := terms(tt.in); !slices.Equal(got, []string{tt.want}) {
			t.Errorf("terms(%q) = %q, want [%s]", tt.in, got, tt.want)
		}
	}
}

func TestRelatedWordnet(t *testing.T) {
	type term struct {
		t string
		w float64
	}
	collect := func(table relatedTable, q string) []term {
		var got []term
		relatedOf(table, q, func(t string, w float64) { got = append(got, term{t, w}) })
		return got
	}
	hand := map[string]string{"junk": "prune"}
	wn := map[string]string{"junk": "discard trash", "mend": "restor fix", "throw out": "discard"}
	table := buildRelated(hand, wn)
	tests := []struct {
		query string
		want  []term
	}{
		// A hand-written key wins over WordNet's for the same word.
		{"junk", []term{{"prun", relatedWeight}}},
		// WordNet's terms come at WordNet's weight, whatever the form.
		{"mends", []term{{"restor", wordnetWeight}, {"fix", wordnetWeight}}},
		// Irregular forms match the keys: "threw out" is "throw out".
		{"throw out the old ones", []term{{"discard", wordnetWeight}}},
		{"nothing related here", nil},
		// A phrasal verb's object may stand between verb and particle, one
		// or two words, and the particle is then taken.
		{"throw them out", []term{{"discard", wordnetWeight}}},
		{"throw these two out", []term{{"discard", wordnetWeight}}},
		{"throw the three old ones out", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, collect(table, tt.query), cmp.AllowUnexported(term{})); diff != "" {
			t.Errorf("relatedOf(%q) (-want +got):\n%s", tt.query, diff)
		}
	}
	// The table is the same from one build to the next.
	for range 3 {
		if diff := cmp.Diff(table, buildRelated(hand, wn), cmp.AllowUnexported(relatedKey{})); diff != "" {
			t.Fatalf("buildRelated differs between builds (-first +again):\n%s", diff)
		}
	}
}

// BenchmarkBuildRelated measures the one-time cost, on a process's first
// search, of building the related-term tables: the hand-written one alone
// as the reference, and with WordNet's.
func BenchmarkBuildRelated(b *testing.B) {
	b.ReportAllocs()
	var hand, both time.Duration
	for b.Loop() {
		start := time.Now()
		buildRelated(relatedTerms(), nil)
		mid := time.Now()
		buildRelated(relatedTerms(), wordnetTerms())
		both += time.Since(mid)
		hand += mid.Sub(start)
	}
	b.ReportMetric(float64(hand.Microseconds())/float64(b.N), "hand-µs/build")
	b.ReportMetric(float64(both.Microseconds())/float64(b.N), "with-wordnet-µs/build")
}
