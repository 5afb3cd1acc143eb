package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

func mustSchema(t *testing.T, src string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(src), &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// A loop of references that never reaches a member or an item is refused
// when compiled, naming the loop; recursion through properties or items is
// kept, and checks a deep value.
func TestCompileRefusesReferenceCycles(t *testing.T) {
	refused := []struct{ src, loop string }{
		{`{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},"$ref":"#/$defs/A"}`, "#/$defs/A → #/$defs/B → #/$defs/A"},
		{`{"$defs":{"A":{"$ref":"#/$defs/A"}},"type":"object","properties":{"x":{"$ref":"#/$defs/A"}}}`, "#/$defs/A → #/$defs/A"},
		{`{"allOf":[{"$ref":"#"}]}`, "# → #/allOf/0 → #"},
		{`{"anyOf":[{"type":"string"},{"$ref":"#"}]}`, "# → #/anyOf/1 → #"},
		{`{"definitions":{"A":{"not":{"$ref":"#/definitions/A"}}},"$ref":"#/definitions/A"}`, "#/definitions/A → #/definitions/A/not → #/definitions/A"},
		{`{"$defs":{"A":{"if":{"$ref":"#/$defs/A"}}},"$ref":"#/$defs/A"}`, "#/$defs/A → #/$defs/A/if → #/$defs/A"},
	}
	for _, tc := range refused {
		_, err := Compile(mustSchema(t, tc.src))
		if err == nil || !strings.Contains(err.Error(), "reference cycle "+tc.loop) {
			t.Errorf("Compile(%s) = %v, want a reference cycle %s", tc.src, err, tc.loop)
		}
	}

	kept := []string{
		`{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
		`{"$defs":{"node":{"properties":{"children":{"items":{"$ref":"#/$defs/node"}}}}},"type":"object","properties":{"root":{"$ref":"#/$defs/node"}}}`,
		`{"type":"object","properties":{"next":{"$ref":"#"}}}`,
		`{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/$defs/A"},"b":{"$ref":"#/$defs/A"}}}`,
	}
	for _, src := range kept {
		if _, err := Compile(mustSchema(t, src)); err != nil {
			t.Errorf("Compile(%s) = %v, want no error", src, err)
		}
	}

	v, err := Compile(mustSchema(t, kept[0]))
	if err != nil {
		t.Fatal(err)
	}
	deep := `{"name":"leaf"}`
	for range 45 {
		deep = `{"name":"n","children":[` + deep + `]}`
	}
	if _, errs := v.Normalize([]byte(deep)); errs != nil {
		t.Errorf("tree 45 deep: %v", errs)
	}
	bad := strings.Replace(deep, `"leaf"`, `{}`, 1)
	_, errs := v.Normalize([]byte(bad))
	if len(errs) != 1 || !strings.HasSuffix(errs[0].Path, ".name") {
		t.Errorf("tree with a bad leaf: %v, want one problem at …name", errs)
	}
}

// However a schema multiplies its branches, one check ends promptly with a
// problem rather than holding a core.
func TestValidateIsBounded(t *testing.T) {
	// Each level tries two branches, both referring to the next level, that
	// fail only at the bottom: 2^24 walks of one small schema.
	defs := `"l24":{"type":"integer"}`
	for i := 23; i >= 0; i-- {
		next := fmt.Sprintf(`{"$ref":"#/$defs/l%d"}`, i+1)
		defs += fmt.Sprintf(`,"l%d":{"type":"array","items":{"anyOf":[%s,{"allOf":[%s]}]}}`, i, next, next)
	}
	v, err := Compile(mustSchema(t, `{"$defs":{`+defs+`},"type":"object","properties":{"x":{"$ref":"#/$defs/l0"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	arg := `"s"`
	for range 24 {
		arg = `[` + arg + `]`
	}
	start := time.Now()
	_, errs := v.Normalize([]byte(`{"x":` + arg + `}`))
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("check took %v", took)
	}
	if len(errs) == 0 {
		t.Fatal("no problem reported")
	}
	if !strings.Contains(errs[0].Message, "too costly") {
		t.Errorf("problem = %v, want it to say the schema is too costly", errs)
	}
}
