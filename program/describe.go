package program

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/safetext"
)

// ident is what a tool name must be to be a function of its own in a
// program; other tools are reached with call("name", {...}).
var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// funcName is the function a tool is in a program, or "" when its name is
// not an identifier (or is a Starlark keyword or builtin).
func funcName(tool string) string {
	if !ident.MatchString(tool) || reserved[tool] {
		return ""
	}
	return tool
}

var reserved = map[string]bool{
	"and": true, "break": true, "continue": true, "def": true, "elif": true, "else": true, "for": true,
	"if": true, "in": true, "lambda": true, "load": true, "not": true, "or": true, "pass": true,
	"return": true, "while": true, "None": true, "True": true, "False": true,
	"call": true, "print": true, "range": true, "len": true, "str": true, "list": true, "dict": true,
	"json": true, "fail": true,
}

// Signature is one tool as a program sees it: a function with keyword
// parameters typed from its input schema, the required ones first, and
// its description.
func Signature(t *wield.Tool) string {
	var b strings.Builder
	name := funcName(t.Name)
	if name == "" {
		fmt.Fprintf(&b, "call(%q, {", t.Name)
	} else {
		b.WriteString(name + "(")
	}
	s := t.InputSchema
	var props []string
	if s != nil {
		props = slices.Sorted(func(yield func(string) bool) {
			for k := range s.Properties {
				if !yield(k) {
					return
				}
			}
		})
		slices.SortStableFunc(props, func(a, b string) int {
			ra, rb := slices.Contains(s.Required, a), slices.Contains(s.Required, b)
			switch {
			case ra == rb:
				return 0
			case ra:
				return -1
			}
			return 1
		})
	}
	for i, p := range props {
		if i > 0 {
			b.WriteString(", ")
		}
		typ := typeName(s.Properties[p])
		if name == "" {
			fmt.Fprintf(&b, "%q: %s", p, typ)
		} else {
			fmt.Fprintf(&b, "%s: %s", p, typ)
		}
		if !slices.Contains(s.Required, p) {
			b.WriteString(" = None")
		}
	}
	if name == "" {
		b.WriteString("})")
	} else {
		b.WriteString(")")
	}
	if d := firstLine(t.Description); d != "" {
		b.WriteString("\n    " + d)
	}
	for _, p := range props {
		if d := firstLine(s.Properties[p].Description); d != "" {
			fmt.Fprintf(&b, "\n    %s: %s", p, d)
		}
	}
	return b.String()
}

func typeName(s *jsonschema.Schema) string {
	if s == nil {
		return "any"
	}
	t := s.Type
	if t == "" && len(s.Types) > 0 {
		t = s.Types[0]
	}
	switch t {
	case "string":
		if len(s.Enum) > 0 {
			var vs []string
			for _, v := range s.Enum {
				vs = append(vs, fmt.Sprintf("%q", v))
			}
			return strings.Join(vs, " | ")
		}
		return "str"
	case "integer":
		return "int"
	case "number":
		return "float"
	case "boolean":
		return "bool"
	case "array":
		return "list[" + typeName(s.Items) + "]"
	case "object":
		return "dict"
	}
	return "any"
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return safetext.Clip(s, 200)
}

// Describe is the description of the program tool for the given tools: how
// to write a program, then each tool as a function. tools are those a
// program may call, as [Callable] gives them: Describe lists every one.
func Describe(tools []*wield.Tool) string {
	var b strings.Builder
	b.WriteString("Run a short Starlark (Python-like) program that calls tools as functions, for work that needs several tool calls: " +
		"loops, filtering, combining results. Each function returns the tool's output (parsed JSON: dict, list, str, number) " +
		"and stops the program with the tool's error if the call fails. Set `result` to what you want back; print() output is returned too. " +
		"No files, network, clock or environment except through these tools. Keyword arguments only.\n\nFunctions:\n")
	for _, t := range tools {
		b.WriteString(Signature(t))
		b.WriteString("\n")
	}
	if len(tools) == 0 {
		b.WriteString("(none)\n")
	}
	return b.String()
}
