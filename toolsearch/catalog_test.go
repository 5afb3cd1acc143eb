package toolsearch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
)

var update = flag.Bool("update", false, "rewrite testdata/catalog.json from testdata/catalog.txt")

// catalogEntry is one tool of testdata/catalog.json.
type catalogEntry struct {
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Category    wield.Category     `json:"category"`
	Tags        []string           `json:"tags"`
	InputSchema *jsonschema.Schema `json:"input_schema"`
}

var (
	domainLine = regexp.MustCompile(`^@([a-z0-9]+) ([a-z]+) ([a-z0-9,\-]+)$`)
	toolLine   = regexp.MustCompile(`^([a-z0-9_]+): (\S.*)$`)
	paramLine  = regexp.MustCompile(`^  ([a-z0-9_]+)(!?)(?::(int|num|bool|list|obj))?(?:=(\S+))?(?: (\S.*))?$`)
)

// parseCatalog reads the line format described at the top of
// testdata/catalog.txt.
func parseCatalog(src []byte) ([]catalogEntry, error) {
	var (
		out    []catalogEntry
		prefix string
		cat    wield.Category
		tags   []string
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if m := domainLine.FindStringSubmatch(line); m != nil {
			prefix, cat, tags = m[1], wield.Category(m[2]), strings.Split(m[3], ",")
			continue
		}
		if m := toolLine.FindStringSubmatch(line); m != nil {
			if prefix == "" {
				return nil, fmt.Errorf("catalog.txt:%d: tool %q before any @domain line", n, m[1])
			}
			out = append(out, catalogEntry{
				Name: prefix + "_" + m[1], Description: m[2], Category: cat, Tags: tags,
				InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
			})
			continue
		}
		if m := paramLine.FindStringSubmatch(line); m != nil {
			if len(out) == 0 {
				return nil, fmt.Errorf("catalog.txt:%d: parameter %q before any tool", n, m[1])
			}
			s := out[len(out)-1].InputSchema
			p := &jsonschema.Schema{Type: "string", Description: m[5]}
			switch m[3] {
			case "int":
				p.Type = "integer"
			case "num":
				p.Type = "number"
			case "bool":
				p.Type = "boolean"
			case "list":
				p.Type, p.Items = "array", &jsonschema.Schema{Type: "string"}
			case "obj":
				p.Type = "object"
			}
			if m[4] != "" {
				for _, v := range strings.Split(m[4], "|") {
					p.Enum = append(p.Enum, v)
				}
			}
			if _, dup := s.Properties[m[1]]; dup {
				return nil, fmt.Errorf("catalog.txt:%d: parameter %q repeated", n, m[1])
			}
			s.Properties[m[1]] = p
			if m[2] == "!" {
				s.Required = append(s.Required, m[1])
			}
			continue
		}
		return nil, fmt.Errorf("catalog.txt:%d: line %q is not a domain, a tool or a parameter", n, line)
	}
	return out, sc.Err()
}

// TestCatalogFile checks that catalog.json is what catalog.txt describes,
// and that the catalog holds 500 well-formed tools with distinct names.
func TestCatalogFile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "catalog.txt"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := parseCatalog(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	path := filepath.Join("testdata", "catalog.json")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("catalog.json is stale; run go test -run TestCatalogFile -update (-want +got):\n%s", diff)
	}

	tools := loadCatalog(t)
	if len(tools) != 500 {
		t.Errorf("catalog has %d tools, want 500", len(tools))
	}
	seen := map[string]bool{}
	for _, tool := range tools {
		if seen[tool.Name] {
			t.Errorf("tool %s appears twice", tool.Name)
		}
		seen[tool.Name] = true
		if err := tool.Check(); err != nil {
			t.Error(err)
		}
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
}

// loadCatalog reads testdata/catalog.json as tools without handlers.
func loadCatalog(t testing.TB) []*wield.Tool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []catalogEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatalf("catalog.json: %v", err)
	}
	tools := make([]*wield.Tool, len(entries))
	for i, e := range entries {
		tools[i] = &wield.Tool{Name: e.Name, Description: e.Description, Category: e.Category, Tags: e.Tags, InputSchema: e.InputSchema}
	}
	return tools
}

// scaledCatalog returns n tools made from the catalog: copies get a
// distinct name suffix and their words in a rotated order, so the index
// sees n different tools with a realistic vocabulary.
func scaledCatalog(t testing.TB, n int) []*wield.Tool {
	base := loadCatalog(t)
	out := make([]*wield.Tool, 0, n)
	for i := 0; len(out) < n; i++ {
		b := base[i%len(base)]
		round := i / len(base)
		if round == 0 {
			out = append(out, b)
			continue
		}
		words := strings.Fields(b.Description)
		r := round % len(words)
		desc := strings.Join(append(words[r:], words[:r]...), " ")
		out = append(out, &wield.Tool{
			Name:        fmt.Sprintf("%s_v%d", b.Name, round+1),
			Description: desc, Category: b.Category, Tags: b.Tags, InputSchema: b.InputSchema,
		})
	}
	return out
}
