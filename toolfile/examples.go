package toolfile

import (
	"encoding/json"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/schema"
	"go.yaml.in/yaml/v3"
)

// maxExamples bounds a tool's examples: each is sent with every request
// that offers the tool, so a long list costs tokens on every turn.
const maxExamples = 20

// examples reads `examples:`, a list of argument objects. They are checked
// against the tool's input schema once the whole tool is read (see
// checkExamples); the nodes are kept for the positions of those problems.
func (d *decoder) examples(f field) ([]json.RawMessage, []*yaml.Node) {
	list, ok := seq(f.val)
	if !ok {
		d.errorf(f.val, "examples: expected a list of argument objects, got %s", kindName(f.val))
		return nil, nil
	}
	if len(list) > maxExamples {
		d.errorf(f.val, "examples: %d examples, at most %d (each one is sent with every request that offers the tool)", len(list), maxExamples)
		return nil, nil
	}
	var out []json.RawMessage
	var nodes []*yaml.Node
	for i, n := range list {
		if x := unwrap(n); x == nil || x.Kind != yaml.MappingNode {
			d.errorf(n, "examples[%d]: expected an object of arguments, got %s", i, kindName(n))
			continue
		}
		v, ok := d.value(n)
		if !ok {
			continue
		}
		raw, err := json.Marshal(v)
		if err != nil {
			d.errorf(n, "examples[%d]: %v", i, err)
			continue
		}
		out = append(out, raw)
		nodes = append(nodes, n)
	}
	return out, nodes
}

// checkExamples refuses an example the tool itself would refuse: an
// example that teaches a model a call that fails is worse than none. The
// check is strict (no coercion): the example is sent as written.
func (d *decoder) checkExamples(def *Def) {
	if len(def.Examples) == 0 {
		return
	}
	v, err := schema.Compile(def.InputSchema())
	if err != nil {
		return // the schema's own problem is reported where it is written
	}
	for i, ex := range def.Examples {
		if _, errs := v.NormalizeStrict(ex); len(errs) > 0 {
			msgs := make([]string, len(errs))
			for j, e := range errs {
				msgs[j] = e.String()
			}
			d.errorf(def.exampleNodes[i], "examples[%d]: does not match the tool's parameters: %s", i, strings.Join(msgs, "; "))
		}
	}
}

// allowedCallers reads `allowed_callers:`, a list of direct and program.
// An empty list is refused: a tool nobody may call belongs in
// `permission: deny`.
func (d *decoder) allowedCallers(f field) []wield.AllowedCaller {
	list, ok := seq(f.val)
	if !ok {
		d.errorf(f.val, "allowed_callers: expected a list of direct and program, got %s", kindName(f.val))
		return nil
	}
	if len(list) == 0 {
		d.errorf(f.val, "allowed_callers: empty: list direct, program or both (to forbid every call, write permission: deny)")
		return nil
	}
	out := make([]wield.AllowedCaller, 0, len(list))
	for _, n := range list {
		c := wield.AllowedCaller(d.str(field{name: f.name, val: n}))
		switch c {
		case wield.AllowedDirect, wield.AllowedProgram:
			if !containsCaller(out, c) {
				out = append(out, c)
			}
		case "":
		default:
			d.errorf(n, "allowed_callers: %q is not direct or program", c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func containsCaller(list []wield.AllowedCaller, c wield.AllowedCaller) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}
