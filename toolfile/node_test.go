package toolfile

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wieldhq/wield"
)

// TestYAML covers what the YAML parser decides: documents, aliases and
// merge keys, scalar types and syntax errors.
func TestYAML(t *testing.T) {
	const entry = "entry: {type: builtin, handler: b}\n"
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for _, c := range "bcdef" {
		prev := string(c - 1)
		bomb += string(c) + ": &" + string(c) + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
	}
	tests := []struct {
		name, src string
		want      []string // tool name, version, description; parameter name=default
		problems  []string
	}{
		{"empty documents", "---\n---\n# nothing\n---\nname: a\n" + entry + "---\n", []string{"a"}, nil},
		{"two documents", "name: a\n" + entry + "---\nname: b\n" + entry, []string{"a", "b"}, nil},
		{"json", `{"name": "a", "version": "1", "entry": {"type": "builtin", "handler": "b"}}`, []string{"a 1"}, nil},
		{"dates and numbers are text", "name: a\nversion: 1.0\ndescription: 2024-01-01\n" + entry, []string{"a 1.0 2024-01-01"}, nil},
		{"alias", "name: a\nentry: &e {type: builtin, handler: b}\n---\nname: b\nentry: *e\n", []string{"a", "b"}, nil},
		{"merge", "name: a\n" + entry + "parameters:\n" +
			"  - &p {name: x, type: integer, default: 1, description: d}\n" +
			"  - {<<: *p, name: y, default: 2}\n" +
			"  - {<<: [{name: z, default: 3}, *p], type: integer}\n",
			[]string{"a", "x=1", "y=2", "z=3"}, nil},
		{"bad merge", "<<: [x]\nname: a\n" + entry, []string{"a"}, []string{`f.yaml:1:6: document: << merges a mapping or a list of mappings, got string`}},
		{"numbers", "name: a\n" + entry + "parameters:\n  - {name: x, type: integer, default: 0x10, validation: {min: 0o7, max: 1_000}}\n" +
			"  - {name: y, type: number, default: -1.5e3}\n  - {name: z, type: integer, default: 017}\n",
			[]string{"a", "x=16", "y=-1500", "z=15"}, nil},
		{"yes is a string", "name: a\n" + entry + "annotations: {read_only: yes}\n", nil,
			[]string{`f.yaml:3:26: read_only: expected true or false, got string`}},
		{"True is a boolean", "name: a\n" + entry + "annotations: {read_only: True}\n", []string{"a"}, nil},
		{"own tag", "name: !name a\n" + entry, []string{"a"}, nil},
		{"infinity", "name: a\n" + entry + "parameters:\n  - {name: x, type: number, default: .inf}\n", nil,
			[]string{`f.yaml:4:38: unsupported value (number)`}},
		{"duplicate key", "name: a\n" + entry + "name: b\n", []string{"a"}, []string{`f.yaml:3:1: document: duplicate key "name"`}},
		{"alias cycle", "name: a\nentry: &e [*e]\n", nil, []string{`f.yaml:2:12: alias *e is inside the node it refers to`}},
		{"alias bomb", bomb, nil, []string{`f.yaml:5:36: aliases expand the file by more than 100000 nodes`}},
		{"syntax error", "name: a\n  entry: x\n", nil, []string{`f.yaml:2:3: syntax error: mapping values are not allowed in this context`}},
		{"unknown anchor", "name: *x\n", nil, []string{`f.yaml:1:1: syntax error: unknown anchor 'x' referenced`}},
		// yaml.v3 counts the parser's lines from 0, names where the
		// construct began, or names no line at all: the position is found
		// again.
		{"unknown anchor further down", "name: a\n" + entry + "description: *x\n", nil, []string{`f.yaml:3:1: syntax error: unknown anchor 'x' referenced`}},
		{"unclosed flow sequence", "name: a\n" + entry + "tags:\n  - x\n  - [y\nversion: 1\n", nil, []string{`f.yaml:5:3: syntax error: did not find expected ',' or ']'`}},
		{"unclosed flow sequence on line 1", "name: [a\n" + entry, nil, []string{`f.yaml:1:1: syntax error: did not find expected ',' or ']'`}},
		{"bad indentation deep in a mapping", "name: a\n" + entry + "annotations:\n  read_only: true\n  idempotent: true\n   open_world: true\n", nil,
			[]string{`f.yaml:6:4: syntax error: mapping values are not allowed in this context`}},
		{"key less indented in a mapping", "name: a\nentry:\n  type: builtin\n  handler: b\n x: 1\n", nil, []string{`f.yaml:5:2: syntax error: did not find expected key`}},
		{"control character", "name: a\n" + entry + "description: \"a\x01b\"\n", nil, []string{`f.yaml:3:16: syntax error: control characters are not allowed`}},
		{"invalid UTF-8", "name: a\n" + entry + "description: é\xff\n", nil, []string{`f.yaml:3:15: syntax error: invalid leading UTF-8 octet`}},
		{"json file", "{\n  \"name\": \"a\",\n  \"version\": \"1\",\n  \"entry\": {\"type\": \"builtin\", \"handler\": \"b\"}\n  \"description\": \"d\"\n}\n", nil,
			[]string{`f.json:5:3: syntax error: invalid character '"' after object key:value pair`}},
		{"second document", "name: a\n" + entry + "---\nname: b\nentry: {type: builtin\n", nil, []string{`f.yaml:5:1: syntax error: did not find expected ',' or '}'`}},
	}
	l := Loader{Builtins: map[string]wield.Handler{"b": wield.HandlerFunc(nil)}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "f.yaml"
			if strings.HasPrefix(tt.name, "json file") {
				name = "f.json"
			}
			set, _ := l.Load(context.Background(), name, []byte(tt.src))
			var got, problems []string
			for _, d := range set.Defs {
				got = append(got, strings.TrimSpace(strings.Join([]string{d.Name, d.Version, d.Description}, " ")))
				for _, p := range d.Parameters {
					if p.HasDefault {
						got = append(got, p.Name+"="+fmt.Sprint(p.Default))
					}
				}
			}
			for _, p := range set.Problems {
				problems = append(problems, p.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
