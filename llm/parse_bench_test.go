package llm

import (
	"sort"
	"testing"
)

// BenchmarkParse parses the mixed corpus of testdata/parse (every format,
// prose, truncated replies) in auto mode; MB/s is over the corpus bytes.
func BenchmarkParse(b *testing.B) {
	corpus := parseCorpus(b)
	names := make([]string, 0, len(corpus))
	for name := range corpus {
		names = append(names, name)
	}
	sort.Strings(names)
	texts := make([]string, len(names))
	size := 0
	for i, name := range names {
		texts[i] = corpus[name]
		size += len(texts[i])
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, text := range texts {
			_, _ = Parse(text, nil)
		}
	}
}

// BenchmarkParseProse measures the common case of a reply with no call.
func BenchmarkParseProse(b *testing.B) {
	text := parseCorpus(b)["prose.txt"]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Parse(text, nil)
	}
}
