package schema

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// edge is one way from a schema to a subschema: same says the subschema
// applies to the same value (allOf, $ref, not, …) rather than to a member or
// an item of it.
type edge struct {
	to   *jsonschema.Schema
	at   string // JSON pointer of the subschema, or the $ref it names
	same bool
}

// refCycle finds a loop of subschemas that apply to the same value, such as
// {"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}}: checking a
// value against it would go round for ever without reaching a member or an
// item, so no validator can finish it. It returns the loop's locations,
// first one repeated at the end, or nil. Recursion through properties or
// items (a tree of nodes) is no loop: each turn goes one level into the value.
func refCycle(root *jsonschema.Schema, resolve func(string) (*jsonschema.Schema, error)) []string {
	edges := func(s *jsonschema.Schema, at string) []edge {
		var out []edge
		add := func(sub *jsonschema.Schema, where string, same bool) {
			if sub != nil {
				out = append(out, edge{sub, where, same})
			}
		}
		if s.Ref != "" {
			if t, err := resolve(s.Ref); err == nil {
				add(t, s.Ref, true)
			}
		}
		for _, kw := range []struct {
			name string
			list []*jsonschema.Schema
		}{{"allOf", s.AllOf}, {"anyOf", s.AnyOf}, {"oneOf", s.OneOf}} {
			for i, sub := range kw.list {
				add(sub, at+"/"+kw.name+"/"+strconv.Itoa(i), true)
			}
		}
		add(s.Not, at+"/not", true)
		add(s.If, at+"/if", true)
		add(s.Then, at+"/then", true)
		add(s.Else, at+"/else", true)
		for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
			add(s.DependentSchemas[k], at+"/dependentSchemas/"+pointerEscape(k), true)
		}
		for _, k := range slices.Sorted(maps.Keys(s.DependencySchemas)) {
			add(s.DependencySchemas[k], at+"/dependencies/"+pointerEscape(k), true)
		}
		for _, k := range slices.Sorted(maps.Keys(s.Defs)) {
			add(s.Defs[k], at+"/$defs/"+pointerEscape(k), false)
		}
		for _, k := range slices.Sorted(maps.Keys(s.Definitions)) {
			add(s.Definitions[k], at+"/definitions/"+pointerEscape(k), false)
		}
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			add(s.Properties[k], at+"/properties/"+pointerEscape(k), false)
		}
		for _, k := range slices.Sorted(maps.Keys(s.PatternProperties)) {
			add(s.PatternProperties[k], at+"/patternProperties/"+pointerEscape(k), false)
		}
		add(s.AdditionalProperties, at+"/additionalProperties", false)
		add(s.PropertyNames, at+"/propertyNames", false)
		add(s.UnevaluatedProperties, at+"/unevaluatedProperties", false)
		add(s.Items, at+"/items", false)
		for i, sub := range s.PrefixItems {
			add(sub, at+"/prefixItems/"+strconv.Itoa(i), false)
		}
		for i, sub := range s.ItemsArray {
			add(sub, at+"/items/"+strconv.Itoa(i), false)
		}
		add(s.AdditionalItems, at+"/additionalItems", false)
		add(s.Contains, at+"/contains", false)
		add(s.UnevaluatedItems, at+"/unevaluatedItems", false)
		return out
	}

	// Name every schema by where it is first met, walking every edge.
	where := map[*jsonschema.Schema]string{root: "#"}
	order := []*jsonschema.Schema{root}
	for i := 0; i < len(order); i++ {
		s := order[i]
		for _, e := range edges(s, where[s]) {
			if _, ok := where[e.to]; !ok {
				at := e.at
				if !strings.HasPrefix(at, "#") {
					at = where[s] + "/" + at
				}
				where[e.to] = at
				order = append(order, e.to)
			}
		}
	}

	// Depth-first search over the same-value edges only.
	const (
		white = iota
		grey
		black
	)
	color := map[*jsonschema.Schema]int{}
	var stack []*jsonschema.Schema
	var found []string
	var visit func(s *jsonschema.Schema) bool
	visit = func(s *jsonschema.Schema) bool {
		color[s] = grey
		stack = append(stack, s)
		for _, e := range edges(s, where[s]) {
			if !e.same {
				continue
			}
			switch color[e.to] {
			case grey:
				i := slices.Index(stack, e.to)
				for _, x := range stack[i:] {
					found = append(found, where[x])
				}
				found = append(found, where[e.to])
				return true
			case white:
				if visit(e.to) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[s] = black
		return false
	}
	for _, s := range order {
		if color[s] == white && visit(s) {
			return found
		}
	}
	return nil
}

func pointerEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// cycleError says which loop of references makes a schema unusable.
func cycleError(loop []string) error {
	return fmt.Errorf("compile schema: reference cycle %s: each of these applies to the same value, so checking it would never end; a recursive schema must go through properties or items before it repeats", strings.Join(loop, " → "))
}
