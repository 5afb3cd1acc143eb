package schema

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// patterns caches compiled patterns: a tool's schema is compiled when its
// file is checked, again when it is registered, and on every reload, and
// tools of one kind share patterns. A *regexp.Regexp is safe for concurrent
// use. The cache stops growing at maxPatterns entries; later patterns are
// compiled each time.
var (
	patterns     sync.Map // string → *regexp.Regexp
	patternCount atomic.Int64
)

const maxPatterns = 4096

// CompilePattern compiles a JSON Schema pattern in Go's regexp dialect
// (RE2), as the validator matches it, from a cache of the patterns compiled
// before.
func CompilePattern(p string) (*regexp.Regexp, error) {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	if patternCount.Load() < maxPatterns {
		if _, loaded := patterns.LoadOrStore(p, re); !loaded {
			patternCount.Add(1)
		}
	}
	return re, nil
}
