//go:build unix

package journeys

// The providers' tool fields from a tool file: examples checked at load
// and sent as Anthropic's input_examples, MCP's _meta and the prompts'
// example calls; allowed_callers with its defaults; strict tool use; the
// documents for the providers' own tool search.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const fieldsWeather = `name: weather
description: Current weather for a city
parameters:
  - {name: city, type: string, description: City name}
  - {name: days, type: integer, required: false, validation: {min: 1, max: 7}}
examples:
  - {city: Paris}
  - {city: "Oslo <north> & co", days: 3}
allowed_callers: [direct, program]
entry: {type: builtin, handler: echo}
`

const fieldsWipe = `name: wipe
description: Delete a folder
permission: confirm
parameters:
  - {name: path, type: string}
entry: {type: builtin, handler: echo}
`

const fieldsBroken = `name: broken
description: An example the tool refuses
parameters:
  - {name: n, type: integer}
examples:
  - {n: many}
entry: {type: builtin, handler: echo}
`

// anthropicTool is the part of an Anthropic tool definition the journey
// reads.
type anthropicTool struct {
	Type           string            `json:"type"`
	Name           string            `json:"name"`
	Description    string            `json:"description"`
	InputSchema    map[string]any    `json:"input_schema"`
	InputExamples  []json.RawMessage `json:"input_examples"`
	AllowedCallers []string          `json:"allowed_callers"`
	Strict         bool              `json:"strict"`
	DeferLoading   bool              `json:"defer_loading"`
}

func anthropicByName(t *testing.T, r *run) (map[string]anthropicTool, []anthropicTool) {
	t.Helper()
	var list []anthropicTool
	r.json(t, &list)
	m := map[string]anthropicTool{}
	for _, x := range list {
		m[x.Name] = x
	}
	return m, list
}

func TestJourneyToolFields(t *testing.T) {
	u := newUser(t)
	u.write("tools/weather.yaml", fieldsWeather)
	u.write("tools/wipe.yaml", fieldsWipe)
	u.write("tools/broken.yaml", fieldsBroken)
	u.write("tools/upkeep.yaml", "name: upkeep\ndescription: Keeping folders tidy\ntools: [wipe, weather]\n")

	// An example the tool itself would refuse is a mistake at its line.
	r := u.wield("--tools", "tools", "list", "--format", "anthropic")
	if r.code == 0 || !strings.Contains(r.stderr, `tools/broken.yaml:6:5: examples[0]: does not match the tool's parameters: n: expected integer`) {
		t.Errorf("a wrong example is not refused at its line and column:\n%s", r)
	}
	if err := os.Remove(u.path("tools/broken.yaml")); err != nil {
		t.Fatal(err)
	}
	s := u.serve("--tools", "tools")

	// Anthropic: the examples as written (no HTML escaping), the callers
	// the file names, none for a tool that says nothing (the API's default,
	// direct only).
	anth := u.must("--tools", "tools", "list", "--format", "anthropic")
	tools, _ := anthropicByName(t, anth)
	weather, wipe := tools["weather"], tools["wipe"]
	var examples []string
	for _, e := range weather.InputExamples {
		var b bytes.Buffer
		if err := json.Compact(&b, e); err != nil {
			t.Fatal(err)
		}
		examples = append(examples, b.String())
	}
	if diff := cmp.Diff([]string{`{"city":"Paris"}`, `{"city":"Oslo <north> & co","days":3}`}, examples); diff != "" {
		t.Errorf("weather's input_examples (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"direct", "code_execution_20260120"}, weather.AllowedCallers); diff != "" {
		t.Errorf("weather's allowed_callers (-want +got):\n%s", diff)
	}
	if wipe.Name != "wipe" || wipe.AllowedCallers != nil || wipe.InputExamples != nil {
		t.Errorf("wipe carries fields it did not ask for: %+v", wipe)
	}
	if strings.Contains(anth.stdout, `\u003c`) || strings.Contains(anth.stdout, `\u0026`) {
		t.Errorf("the examples are HTML-escaped:\n%s", anth.stdout)
	}

	// wield's own description: the effective callers, both for an auto
	// tool, direct only for a confirm one.
	var views []struct {
		Name           string            `json:"name"`
		Examples       []json.RawMessage `json:"examples"`
		AllowedCallers []string          `json:"allowed_callers"`
	}
	u.must("--tools", "tools", "list", "--json").json(t, &views)
	callers := map[string][]string{}
	for _, v := range views {
		callers[v.Name] = v.AllowedCallers
	}
	if diff := cmp.Diff(map[string][]string{"weather": {"direct", "program"}, "wipe": {"direct"}, "echo": {"direct", "program"}},
		map[string][]string{"weather": callers["weather"], "wipe": callers["wipe"], "echo": callers["echo"]}); diff != "" {
		t.Errorf("allowed_callers of wield list --json (-want +got):\n%s", diff)
	}

	// Strict tool use: strict on every tool, the bounds the API cannot
	// constrain moved into the description.
	strict, _ := anthropicByName(t, u.must("--tools", "tools", "list", "--format", "anthropic-strict"))
	days, _ := strict["weather"].InputSchema["properties"].(map[string]any)["days"].(map[string]any)
	if !strict["weather"].Strict || days["minimum"] != nil || days["description"] != "minimum: 1;maximum: 7" {
		t.Errorf("anthropic-strict weather: strict %v, days %v", strict["weather"].Strict, days)
	}

	// The provider's own tool search: its search tool first, every tool
	// deferred but the one to keep loaded; the same from the server and
	// through it.
	deferred := u.must("--tools", "tools", "list", "--format", "anthropic", "--deferred", "--load", "weather")
	_, list := anthropicByName(t, deferred)
	if len(list) < 3 || list[0].Type != "tool_search_tool_bm25_20251119" {
		t.Fatalf("the deferred document does not start with the search tool:\n%s", deferred.stdout)
	}
	for _, x := range list[1:] {
		if x.DeferLoading == (x.Name == "weather") {
			t.Errorf("%s: defer_loading %v", x.Name, x.DeferLoading)
		}
	}
	code, body := s.do("GET", "/v1/tools?format=anthropic&deferred=true&load=weather", "")
	if code != 200 || string(body) != deferred.stdout {
		t.Errorf("GET ?format=anthropic&deferred=true&load=weather: %d, differs from wield list:\n%s", code, body)
	}
	remote := u.must("--server", s.url, "list", "--format", "anthropic", "--deferred", "--load", "weather")
	if remote.stdout != deferred.stdout {
		t.Errorf("wield --server list --deferred differs:\n%s", remote.stdout)
	}
	responses := u.must("--tools", "tools", "list", "--format", "responses", "--deferred")
	if !strings.HasPrefix(responses.stdout, "[\n  {\n    \"type\": \"tool_search\"\n  },") || !strings.Contains(responses.stdout, `"defer_loading": true`) {
		t.Errorf("responses --deferred:\n%.600s", responses.stdout)
	}

	// Toolsets become the Responses API's namespaces of deferred tools.
	spaced := u.must("--tools", "tools", "list", "--format", "responses", "--deferred", "--namespaces", "--load", "weather")
	var entries []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Name         string `json:"name"`
			DeferLoading bool   `json:"defer_loading"`
		} `json:"tools"`
	}
	spaced.json(t, &entries)
	var upkeep []string
	for _, e := range entries {
		if e.Type == "namespace" && e.Name == "upkeep" {
			for _, x := range e.Tools {
				upkeep = append(upkeep, x.Name)
			}
		}
	}
	if diff := cmp.Diff([]string{"wipe"}, upkeep); diff != "" {
		t.Errorf("the upkeep namespace holds (-want +got):\n%s\n%s", diff, spaced.stdout)
	}
	if code, body := s.do("GET", "/v1/tools?format=responses&deferred=true&namespaces=true&load=weather", ""); code != 200 || string(body) != spaced.stdout {
		t.Errorf("GET ?namespaces=true: %d, differs from wield list --namespaces:\n%s", code, body)
	}

	// What cannot be deferred is refused, never exported plain.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--format", "openai", "--deferred"}, "no deferred loading"},
		{[]string{"list", "--deferred"}, "--deferred, --load and --namespaces apply to an export"},
		{[]string{"list", "--format", "anthropic", "--deferred", "--load", "wether"}, `load: no tool "wether"`},
		{[]string{"list", "--format", "anthropic", "--deferred", "--namespaces"}, "no namespaces"},
	} {
		for _, prefix := range [][]string{{"--tools", "tools"}, {"--server", s.url}} {
			r := u.wield(append(prefix, c.args...)...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
				t.Errorf("want exit 2, no output and %q:\n%s", c.want, r)
			}
		}
	}

	// The prompt's example call is the tool's first example; the others
	// follow in short form.
	xml := u.must("--tools", "tools", "list", "--format", "xml")
	for _, want := range []string{"<city><![CDATA[Paris]]></city>", "More examples (arguments as JSON):\n  {\"city\":\"Oslo <north> & co\",\"days\":3}\n"} {
		if !strings.Contains(xml.stdout, want) {
			t.Errorf("the xml prompt lacks %q:\n%s", want, xml.stdout)
		}
	}

	// MCP clients find the examples and callers in the tool's _meta.
	c := &http.Client{Timeout: 30 * time.Second}
	_, session, _ := mcpPost(t, c, s.url+"/mcp", "", floodInit)
	_, _, msg := mcpPost(t, c, s.url+"/mcp", session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	raw, _ := json.Marshal(msg["result"])
	var listed struct {
		Tools []struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &listed); err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	for _, x := range listed.Tools {
		if x.Name == "weather" {
			meta = x.Meta
		}
	}
	got, _ := json.Marshal(meta)
	if want := `{"wield/allowed_callers":["direct","program"],"wield/input_examples":[{"city":"Paris"},{"city":"Oslo \u003cnorth\u003e \u0026 co","days":3}],"wield/permission":"auto"}`; string(got) != want {
		t.Errorf("weather's _meta over MCP: %s, want %s", got, want)
	}
	if code, took := s.stop(syscall.SIGTERM, 10*time.Second); code != 0 {
		t.Errorf("serve exited %d after %v:\n%s", code, took, s.stderr)
	}
}

// TestJourneyChatGeminiJSONSchema: `wield chat --json-schema` offers Gemini
// the tools as JSON Schema in parametersJsonSchema: route's $ref and $defs
// as written (oneOf as anyOf), and http_get, which the OpenAPI form cannot
// offer; the call runs and is recorded as with the default form.
func TestJourneyChatGeminiJSONSchema(t *testing.T) {
	model, _ := newFakeProvider(t, wireGemini, "journey-key", "",
		reply(geminiContent("", [2]string{"route", routeArgs})),
		reply(geminiContent("Route planned.")))
	r, schema, names := runProviderChat(t, providerChat{
		model: model,
		args:  []string{"--provider", "gemini", "--model", "gemini-journey", "--json-schema"},
		env:   [][2]string{{"GEMINI_API_KEY", "journey-key"}, {"GOOGLE_GEMINI_BASE_URL", model.srv.URL}},
		tool: func(t *testing.T, body map[string]any) (map[string]any, []string) {
			var schema map[string]any
			var names []string
			for _, d := range body["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any) {
				dm := d.(map[string]any)
				names = append(names, dm["name"].(string))
				if dm["parameters"] != nil {
					t.Errorf("%v carries parameters beside parametersJsonSchema", dm["name"])
				}
				if dm["name"] == "route" {
					schema, _ = dm["parametersJsonSchema"].(map[string]any)
				}
			}
			return schema, names
		},
		result: func(body map[string]any) string {
			contents := body["contents"].([]any)
			b, _ := json.Marshal(contents[len(contents)-1])
			return string(b)
		},
	}, "geminijs1")
	props, _ := schema["properties"].(map[string]any)
	to, _ := props["to"].(map[string]any)
	mode, _ := props["mode"].(map[string]any)
	if schema["type"] != "object" || schema["$defs"] == nil || to["$ref"] != "#/$defs/Point" || mode["anyOf"] == nil || mode["oneOf"] != nil {
		t.Errorf("route's parametersJsonSchema is not its schema as written (oneOf as anyOf):\n%v", schema)
	}
	if !slices.Contains(names, "http_get") || strings.Contains(r.stderr, `not offered to the model: gemini-json-schema: tool "http_get"`) {
		t.Errorf("http_get is not offered in parametersJsonSchema: %v\n%s", names, r.stderr)
	}
}

// TestJourneyChatAnthropicStrict: `wield chat --strict` with Anthropic
// sends every tool with "strict": true and route's schema as strict tool
// use takes it (its minimum moved into the description, oneOf as anyOf);
// the tools strict mode cannot express (http_get's map of headers) are
// named on stderr and left out, and the call runs.
func TestJourneyChatAnthropicStrict(t *testing.T) {
	model, _ := newFakeProvider(t, wireAnthropic, "journey-key", "",
		reply(anthropicMessage("Let me plan it.", [2]string{"route", routeArgs})),
		reply(anthropicMessage("Route planned.")))
	strictAll := true
	r, schema, names := runProviderChat(t, providerChat{
		model: model,
		args:  []string{"--provider", "anthropic", "--model", model.srv.URL + "/v1/claude-journey", "--strict"},
		env:   [][2]string{{"ANTHROPIC_API_KEY", "journey-key"}},
		tool: func(t *testing.T, body map[string]any) (map[string]any, []string) {
			var schema map[string]any
			var names []string
			for _, tl := range body["tools"].([]any) {
				tm := tl.(map[string]any)
				names = append(names, tm["name"].(string))
				strictAll = strictAll && tm["strict"] == true
				if tm["name"] == "route" {
					schema = tm["input_schema"].(map[string]any)
				}
			}
			return schema, names
		},
		result: func(body map[string]any) string {
			msgs := body["messages"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)
			b, _ := json.Marshal(last["content"])
			return string(b)
		},
	}, "anthropicstrict1")
	if !strictAll {
		t.Error("a tool went without strict: true")
	}
	mode, _ := schema["properties"].(map[string]any)["mode"].(map[string]any)
	branches, _ := mode["anyOf"].([]any)
	if len(branches) != 2 || mode["oneOf"] != nil || branches[1].(map[string]any)["description"] != "minimum: 1" {
		t.Errorf("route's mode is not anyOf with the minimum in a description:\n%v", mode)
	}
	if slices.Contains(names, "http_get") || !strings.Contains(r.stderr, `not offered to the model: anthropic-strict: tool "http_get"`) {
		t.Errorf("http_get (a map of headers) is offered to strict tool use or not named on stderr: %v\n%s", names, r.stderr)
	}
}
