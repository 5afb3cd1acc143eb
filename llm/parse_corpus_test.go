package llm

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parseUpdate rewrites the golden files of TestParseCorpus. Its name is
// parse-specific so other tests in the package can have their own -update.
var parseUpdate = flag.Bool("update-parse", false, "rewrite testdata/parse/*.golden")

// parseCorpus returns the model outputs under testdata/parse, by file name.
func parseCorpus(tb testing.TB) map[string]string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "parse", "*"))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, ".golden") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		out[filepath.Base(name)] = string(b)
	}
	if len(out) == 0 {
		tb.Fatal("no corpus files in testdata/parse")
	}
	return out
}

// TestParseCorpus parses whole model outputs in auto mode and compares the
// calls and the error with testdata/parse/<file>.golden (go test
// -run TestParseCorpus -update-parse rewrites them).
func TestParseCorpus(t *testing.T) {
	for name, text := range parseCorpus(t) {
		t.Run(name, func(t *testing.T) {
			calls, err := Parse(text, nil)
			got := struct {
				Calls []ParsedCall `json:"calls"`
				Error string       `json:"error,omitempty"`
			}{Calls: calls}
			if err != nil {
				got.Error = err.Error()
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(got); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "parse", name+".golden")
			if *parseUpdate {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update-parse to create it)", err)
			}
			if diff := cmp.Diff(string(want), buf.String()); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
		})
	}
}
