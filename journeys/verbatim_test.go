//go:build unix

package journeys

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedsDir is where the source documents are: $WIELD_SEEDS, else the
// shared/seeds folder beside the checkout ("" when neither exists).
func seedsDir() string {
	for _, d := range []string{os.Getenv("WIELD_SEEDS"), filepath.Join("..", "..", "shared", "seeds")} {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}

// fencedBlocks returns the fenced code blocks of a Markdown text, each with
// the indentation of its opening fence taken off its lines (a block inside a
// list item is indented), ending in a newline.
func fencedBlocks(text string) []string {
	var out []string
	var cur []string
	indent, in := "", false
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if !in {
			if strings.HasPrefix(trimmed, "```") {
				in, cur = true, nil
				indent = line[:len(line)-len(strings.TrimLeft(line, " "))]
			}
			continue
		}
		if trimmed == "```" {
			out = append(out, strings.Join(cur, "\n")+"\n")
			in = false
			continue
		}
		cur = append(cur, strings.TrimPrefix(line, indent))
	}
	return out
}

// TestExamplesVerbatim holds the examples under testdata/seeds/NNN/ to the
// source document NNN they were taken from: each file is one of its fenced
// blocks, byte for byte, so the journeys use the examples as written.
func TestExamplesVerbatim(t *testing.T) {
	dir := seedsDir()
	if dir == "" {
		t.Skip("the source documents are not beside this checkout (set WIELD_SEEDS to check the examples against them)")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "seeds", "*", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples under testdata/seeds (%v)", err)
	}
	for _, f := range files {
		num := filepath.Base(filepath.Dir(f))
		docs, _ := filepath.Glob(filepath.Join(dir, num+"_*.txt"))
		if len(docs) != 1 {
			t.Errorf("%s: no single source document %s_*.txt in %s", f, num, dir)
			continue
		}
		doc, err := os.ReadFile(docs[0])
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, b := range fencedBlocks(string(doc)) {
			if b == string(want) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s is not, byte for byte, a fenced block of %s", f, filepath.Base(docs[0]))
		}
	}
}
