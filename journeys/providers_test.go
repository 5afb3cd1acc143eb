//go:build unix

package journeys

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// routeTool is a tool file whose input schema has what providers read
// differently: a $ref into $defs (one with a sibling description),
// additionalProperties false on every object, and a oneOf. Its command
// prints a fixed line: a command entry's placeholders name `parameters:`,
// not the properties of an input_schema; the record holds the arguments.
const routeTool = `name: route
description: Plan a route between two points.
input_schema:
  type: object
  $defs:
    Point:
      type: object
      properties:
        x: {type: number}
        y: {type: number}
      required: [x, y]
      additionalProperties: false
  properties:
    from: {$ref: "#/$defs/Point"}
    to: {$ref: "#/$defs/Point", description: Where to go}
    mode:
      oneOf:
        - {type: string, enum: [walk, drive]}
        - {type: integer, minimum: 1}
  required: [from, to]
  additionalProperties: false
entry:
  type: command
  command: ["printf", "route by foot"]
`

const routeArgs = `{"from":{"x":1,"y":2},"to":{"x":3,"y":4},"mode":"walk"}`

// providerChat is one provider's journey: the fake, the command line and
// what its requests must show.
type providerChat struct {
	model *fakeModel
	args  []string
	env   [][2]string
	// tool finds the route tool in a request body and returns its
	// schema as sent, and the names of every tool offered.
	tool func(t *testing.T, body map[string]any) (schema map[string]any, names []string)
	// result finds what the model read of the route call's result in
	// the second request.
	result func(body map[string]any) string
}

// runProviderChat runs one line of chat against the provider and checks
// what every provider must show: exit 0, the model's answer, the route
// call traced once and recorded under its conversation, its result back
// to the model in the second request. It returns the run and the schema
// of route as the first request carried it.
func runProviderChat(t *testing.T, pc providerChat, conv string) (*run, map[string]any, []string) {
	t.Helper()
	u := newUser(t)
	for _, kv := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
		"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"} {
		u.setenv(kv, "")
	}
	for _, kv := range pc.env {
		u.setenv(kv[0], kv[1])
	}
	u.write("tools/route.yaml", routeTool)
	r := u.wieldIn("Plan my walk\n", append([]string{"chat", "--tools", "tools", "--conversation", conv}, pc.args...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "Route planned.") {
		t.Fatalf("want exit 0 and the model's answer:\n%s", r)
	}
	if got := strings.Count(r.stderr, "→ route "); got != 1 || !strings.Contains(r.stderr, "← route ok") {
		t.Errorf("the route call shows %d times on stderr, want once, and its outcome:\n%s", got, r.stderr)
	}
	bodies := pc.model.bodies(t)
	if len(bodies) != 2 {
		t.Fatalf("the model was asked %d times, want 2 (the call, then the answer):\n%s", len(bodies), r)
	}
	schema, names := pc.tool(t, bodies[0])
	if schema == nil {
		t.Fatalf("the first request does not offer route:\n%s", pc.model.raw[0])
	}
	if got := pc.result(bodies[1]); !strings.Contains(got, "route by foot") {
		t.Errorf("the model read %q of the route call, want its output", got)
	}
	rec := u.must("calls", "--conversation", conv, "--json")
	var got struct {
		Records []struct {
			Call struct {
				Tool      string         `json:"tool"`
				Arguments map[string]any `json:"arguments"`
			} `json:"call"`
			Result struct {
				OK bool `json:"ok"`
			} `json:"result"`
		} `json:"records"`
	}
	rec.json(t, &got)
	if len(got.Records) != 1 || got.Records[0].Call.Tool != "route" || !got.Records[0].Result.OK || got.Records[0].Call.Arguments["mode"] != "walk" {
		t.Errorf("the records of %s: %+v, want the one route call, ok, with its arguments", conv, got.Records)
	}
	return r, schema, names
}

// keysAnywhere lists the keys of v, at any depth, that are among names.
func keysAnywhere(v any, names ...string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			for _, n := range names {
				if k == n {
					out = append(out, k)
				}
			}
			out = append(out, keysAnywhere(sub, names...)...)
		}
	case []any:
		for _, sub := range x {
			out = append(out, keysAnywhere(sub, names...)...)
		}
	}
	return out
}

// TestJourneyChatAnthropic: `wield chat` with a model named claude-* on a
// server of its own infers Anthropic (and says so), sends ANTHROPIC_API_KEY
// as x-api-key, offers the route tool's schema as it is ($ref, $defs,
// additionalProperties, oneOf: the Messages API takes them below the top),
// runs the tool_use block through the engine and sends its tool_result.
func TestJourneyChatAnthropic(t *testing.T) {
	model, _ := newFakeProvider(t, wireAnthropic, "journey-key", "",
		reply(anthropicMessage("Let me plan it.", [2]string{"route", routeArgs})),
		reply(anthropicMessage("Route planned.")))
	r, schema, names := runProviderChat(t, providerChat{
		model: model,
		args:  []string{"--model", model.srv.URL + "/v1/claude-journey"},
		env:   [][2]string{{"ANTHROPIC_API_KEY", "journey-key"}},
		tool: func(t *testing.T, body map[string]any) (map[string]any, []string) {
			var schema map[string]any
			var names []string
			for _, tl := range body["tools"].([]any) {
				tm := tl.(map[string]any)
				names = append(names, tm["name"].(string))
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
	}, "anthropic1")
	if !strings.Contains(r.stderr, "--provider anthropic, from the model name claude-journey") {
		t.Errorf("stderr does not say the provider was inferred from the name:\n%s", r.stderr)
	}
	if got := keysAnywhere(schema, "$ref", "$defs", "additionalProperties", "oneOf"); len(got) < 4 {
		t.Errorf("route's input_schema lost what Anthropic takes (found %v):\n%v", got, schema)
	}
	if !slices.Contains(names, "http_get") || !slices.Contains(names, "echo") {
		t.Errorf("tools offered: %v, want the built-ins (http_get's map of headers included) and route", names)
	}
}

// TestJourneyChatGemini: `wield chat --provider gemini` with the key and
// base URL in Google's variables sends the route tool as `wield list
// --format gemini` exports it: parameters in Gemini's schema (no $ref,
// $defs, additionalProperties or oneOf; the fake refuses any of them as
// Gemini does), runs the functionCall and sends the functionResponse. The
// built-ins Gemini cannot take (maps of headers) are named on stderr and
// left out, and the chat goes on. The call goes back with its thought
// signature, which the fake, as Gemini 3 does, requires.
func TestJourneyChatGemini(t *testing.T) {
	model, _ := newFakeProvider(t, wireGemini, "journey-key", "",
		reply(geminiContent("", [2]string{"route", routeArgs})),
		reply(geminiContent("Route planned.")))
	r, schema, names := runProviderChat(t, providerChat{
		model: model,
		args:  []string{"--provider", "gemini", "--model", "gemini-journey"},
		env:   [][2]string{{"GEMINI_API_KEY", "journey-key"}, {"GOOGLE_GEMINI_BASE_URL", model.srv.URL}},
		tool: func(t *testing.T, body map[string]any) (map[string]any, []string) {
			var schema map[string]any
			var names []string
			for _, d := range body["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any) {
				dm := d.(map[string]any)
				names = append(names, dm["name"].(string))
				if dm["name"] == "route" {
					schema = dm["parameters"].(map[string]any)
				}
			}
			return schema, names
		},
		result: func(body map[string]any) string {
			contents := body["contents"].([]any)
			b, _ := json.Marshal(contents[len(contents)-1])
			return string(b)
		},
	}, "gemini1")
	if got := keysAnywhere(schema, "$ref", "$defs", "additionalProperties", "oneOf", "parametersJsonSchema"); len(got) > 0 {
		t.Errorf("route's parameters carry %v, which Gemini refuses:\n%v", got, schema)
	}
	mode, _ := schema["properties"].(map[string]any)["mode"].(map[string]any)
	if schema["type"] != "OBJECT" || mode["anyOf"] == nil {
		t.Errorf("route's parameters are not Gemini's schema with mode as anyOf:\n%v", schema)
	}
	for _, name := range []string{"http_get", "http_request"} {
		if !strings.Contains(r.stderr, `wield: not offered to the model: gemini: tool "`+name+`"`) {
			t.Errorf("stderr does not name %s as left out:\n%s", name, r.stderr)
		}
		if slices.Contains(names, name) {
			t.Errorf("%s was offered to Gemini", name)
		}
	}
}

// TestJourneyChatResponses: `wield chat --api responses` talks to OpenAI's
// Responses API with OPENAI_API_KEY: the route tool as a flat function
// tool with its schema as it is and "strict": false, the function_call run
// and its function_call_output sent back; the call a reasoning item drafts
// is never run.
func TestJourneyChatResponses(t *testing.T) {
	model, _ := newFakeProvider(t, wireResponses, "journey-key", "",
		reply(response("", [2]string{"route", routeArgs})),
		reply(response("Route planned.")))
	r, schema, _ := runProviderChat(t, providerChat{
		model: model,
		args:  []string{"--api", "responses", "--model", model.srv.URL + "/v1/gpt-journey"},
		env:   [][2]string{{"OPENAI_API_KEY", "journey-key"}},
		tool: func(t *testing.T, body map[string]any) (map[string]any, []string) {
			var schema map[string]any
			var names []string
			for _, tl := range body["tools"].([]any) {
				tm := tl.(map[string]any)
				names = append(names, tm["name"].(string))
				if tm["name"] == "route" {
					if tm["type"] != "function" || tm["strict"] != false {
						t.Errorf("route is offered as %v", tm)
					}
					schema = tm["parameters"].(map[string]any)
				}
			}
			return schema, names
		},
		result: func(body map[string]any) string {
			for _, it := range body["input"].([]any) {
				if im := it.(map[string]any); im["type"] == "function_call_output" && im["call_id"] == "call_0" {
					s, _ := im["output"].(string)
					return s
				}
			}
			return ""
		},
	}, "responses1")
	if got := keysAnywhere(schema, "$ref", "$defs", "additionalProperties", "oneOf"); len(got) < 4 {
		t.Errorf("route's parameters lost what the Responses API takes (found %v):\n%v", got, schema)
	}
	if strings.Contains(r.stderr, "delete_file") {
		t.Errorf("the call drafted in a reasoning item was run:\n%s", r.stderr)
	}
}

// TestJourneyChatProviderRefusals: what cannot reach a model is refused
// before anything runs, exit 2, with what to change: a provider's key
// missing, the Responses API or strict mode asked of another provider, an
// unknown provider.
func TestJourneyChatProviderRefusals(t *testing.T) {
	u := newUser(t)
	for _, kv := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
		u.setenv(kv, "")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		// OpenAI's own API answers a request without a key with 401; a
		// server of one's own (URL/NAME) needs none.
		{[]string{"--model", "gpt-4.1"}, "openai: no API key for api.openai.com: set OPENAI_API_KEY, or name the variable that holds it with --api-key-env"},
		{[]string{"--model", "claude-sonnet-4-5"}, "anthropic: no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or name the variable that holds it with --api-key-env"},
		{[]string{"--model", "gemini-2.5-flash"}, "gemini: no API key: set GEMINI_API_KEY (or GOOGLE_API_KEY)"},
		{[]string{"--model", "claude-sonnet-4-5", "--api", "responses"}, "--api responses is OpenAI's Responses API; the provider is anthropic"},
		{[]string{"--provider", "gemini", "--model", "x", "--strict"}, "--strict is OpenAI's strict mode and Anthropic's strict tool use; the provider is gemini (--json-schema sends its tools as JSON Schema)"},
		{[]string{"--provider", "openai", "--model", "x", "--json-schema"}, "--json-schema is Gemini's parametersJsonSchema; the provider is openai"},
		{[]string{"--provider", "bedrock", "--model", "x"}, `--provider "bedrock": want one of openai, anthropic, gemini`},
		{[]string{}, "--model is required"},
	} {
		r := u.wieldIn("hi\n", append([]string{"chat"}, tt.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
			t.Errorf("want exit 2 and %q:\n%s", tt.want, r)
		}
	}
}
