package toolfile

import (
	"encoding/json"
	"strings"

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
