package toolfile

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/schema"
)

// InputSchema compiles the parameters to the JSON Schema of the tool's
// arguments: an object with the properties in file order, the required ones
// listed, and no others allowed.
func (def *Def) InputSchema() *jsonschema.Schema {
	if def.Schema != nil {
		return def.Schema
	}
	s := &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	for _, p := range def.Parameters {
		s.Properties[p.Name] = p.schema()
		s.PropertyOrder = append(s.PropertyOrder, p.Name)
		if p.Required {
			s.Required = append(s.Required, p.Name)
		}
	}
	return s
}

func (p *Param) schema() *jsonschema.Schema {
	s := p.rules()
	if p.HasDefault {
		s.Default, _ = json.Marshal(p.Default)
	}
	return s
}

// rules is the parameter's schema without its default, to check the default.
func (p *Param) rules() *jsonschema.Schema {
	v := p.Validation
	s := &jsonschema.Schema{Type: p.Type, Description: p.Description, Pattern: v.Pattern, Format: v.Format, Enum: v.Enum,
		Minimum: v.Min, Maximum: v.Max, MinLength: v.MinLength, MaxLength: v.MaxLength,
		MinItems: v.MinItems, MaxItems: v.MaxItems}
	if v.Items != nil {
		s.Items = v.Items.schema()
	}
	if len(v.Properties) > 0 {
		s.Properties = map[string]*jsonschema.Schema{}
		s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
		for _, q := range v.Properties {
			s.Properties[q.Name] = q.schema()
			s.PropertyOrder = append(s.PropertyOrder, q.Name)
			if q.Required && !contains(v.Required, q.Name) {
				s.Required = append(s.Required, q.Name)
			}
		}
	}
	s.Required = append(s.Required, v.Required...)
	return s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkDefaults reports every default that its own rules refuse (a default
// outside the enum, too long, not matching the pattern, of the wrong type).
func (d *decoder) checkDefaults(ps []*Param, what string) {
	for _, p := range ps {
		name := what + p.Name
		if p.HasDefault && p.defNode != nil {
			v, err := schema.Compile(p.rules())
			if err == nil {
				b, _ := json.Marshal(p.Default)
				if errs := v.Validate(b); len(errs) > 0 {
					d.errorf(p.defNode, "parameter %q: default %s does not fit its rules: %s", name, b, errs[0].String())
				}
			}
		}
		if len(p.enumNodes) > 0 && p.Type != "" {
			if v, err := schema.Compile(&jsonschema.Schema{Type: p.Type}); err == nil {
				for i, e := range p.Validation.Enum {
					b, _ := json.Marshal(e)
					if errs := v.Validate(b); len(errs) > 0 {
						d.errorf(p.enumNodes[i], "parameter %q: enum value %s is not of type %s", name, b, p.Type)
					}
				}
			}
		}
		d.checkDefaults(p.Validation.Properties, name+".")
	}
}

// OutputSchema compiles the output description, or returns nil without one.
func (def *Def) OutputSchema() *jsonschema.Schema {
	o := def.Output
	if o == nil {
		return nil
	}
	s := &jsonschema.Schema{Type: typeOrAny(o.Type)}
	if len(o.Properties) > 0 {
		s.Properties = map[string]*jsonschema.Schema{}
		for _, p := range o.Properties {
			s.Properties[p.Name] = &jsonschema.Schema{Type: typeOrAny(p.Type)}
			s.PropertyOrder = append(s.PropertyOrder, p.Name)
		}
	}
	return s
}

func typeOrAny(t string) string {
	if t == "any" {
		return ""
	}
	return t
}

// Tool makes the wield tool of the definition with the given handler (nil
// for none). A command tool without a timeout of its own takes its
// command's.
func (def *Def) Tool(h wield.Handler) *wield.Tool {
	timeout := def.Timeout
	if timeout == 0 && def.Entry.Command != nil {
		// The engine's default could cut the command before its own limit.
		timeout = def.Entry.Command.Timeout
	}
	cat := wield.Category(def.Category)
	if cat == "" {
		cat = wield.CategoryCustom
	}
	return &wield.Tool{
		Name:         def.Name,
		Version:      def.Version,
		Description:  def.Description,
		Category:     cat,
		Tags:         def.Tags,
		InputSchema:  def.InputSchema(),
		OutputSchema: def.OutputSchema(),
		Annotations:  def.Annotations,
		Permission:   def.Permission,
		Timeout:      timeout,
		MaxOutput:    def.MaxOutput,
		Secrets:      def.Secrets,
		Examples:     def.Examples,
		Task:         def.Task,
		Source:       def.Source(),
		Handler:      h,

		AllowedCallers: def.AllowedCallers,
	}
}
