package policy

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/cedar-policy/cedar-go"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"
)

// Schema is the Cedar schema of wield's entity model (see the package
// documentation), which every policy is checked against when it is loaded:
// a policy that names an entity type, an action, an attribute of a tool or
// a context key that the model does not have is refused with its file and
// line, as a file that does not parse is (on reload, the last good set
// stays). `wield policy schema` prints it.
//
// The arguments (context.args) are the one part not checked: they differ
// from tool to tool, and a Cedar record type lists its attributes, so
// args is declared as an empty record and what a policy reads in it is
// left to the decision (a policy that reads an argument a call lacks is
// skipped for that call and named in the decision's errors). args and
// dropped are absent when a list asks, so they are optional: test them
// with `context has args`.
const Schema = `// wield's Cedar entity model: principal, action, resource and context of
// every decision (wield policy schema).

// The principal: the API key a server authenticated, else the caller's
// user, else the caller's agent (an MCP client is Agent::"mcp:NAME";
// a program's inner call is its caller's), else Anonymous::"local".
entity Key, User, Agent, Anonymous;

// The toolsets that hold a tool are its parents: resource in Toolset::"files".
entity Toolset;

entity Tool in [Toolset] {
  name: String,
  category: String,
  tags: Set<String>,
  read_only: Bool,
  destructive: Bool,
  idempotent: Bool,
  open_world: Bool,
  permission: String,   // auto, confirm or deny
  source: String,
};

action call appliesTo {
  principal: [Key, User, Agent, Anonymous],
  resource: [Tool],
  context: {
    args?: {},              // the coerced arguments (not typed: they differ per tool); absent for lists
    dropped?: Set<String>,  // paths of argument values Cedar cannot hold; absent for lists
    conversation: String,
    agent: String,
    user: String,
    caller_type: String,    // conversation_agent, workflow_node, direct or program
  },
};
`

// contextKeys are the context attributes of the schema.
var contextKeys = map[string]bool{"args": true, "dropped": true, "conversation": true, "agent": true, "user": true, "caller_type": true}

// validator is the schema's validator, made once.
var validator = sync.OnceValues(func() (*validate.Validator, error) {
	var s schema.Schema
	if err := s.UnmarshalCedar([]byte(Schema)); err != nil {
		return nil, err
	}
	r, err := s.Resolve()
	if err != nil {
		return nil, err
	}
	// Permissive: what matters here is the names a policy uses; a set
	// of principals of several types is fine.
	return validate.New(r, validate.WithPermissive()), nil
})

// contextAttr is the validator's words for a context attribute it does
// not know, and optionalAttr for an optional one read without `has`.
var (
	contextAttr  = regexp.MustCompile("attribute `([^`]*)` in context for [^ ]+ not found")
	optionalAttr = regexp.MustCompile("unable to guarantee safety of access to optional attribute `(args|dropped)` in context")
	policyPrefix = regexp.MustCompile("^for policy `[^`]*`, ")
)

// checkSchema checks p against [Schema] and returns what is wrong with it,
// one problem a line, or "" when nothing is. The problems that concern the
// arguments are not (see Schema): an attribute of context.args, and args or
// dropped read without a `has` test (a policy that reads an argument is
// skipped for a request without it).
func checkSchema(p *cedar.Policy) string {
	v, err := validator()
	if err != nil {
		return "the policy schema does not load: " + err.Error() // a defect of Schema itself, caught by its test
	}
	err = v.Policy("p", (*xast.Policy)(p.AST()))
	if err == nil {
		return ""
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok { //nolint:errorlint // the validator's joined list, one level
		errs = j.Unwrap()
	}
	text := string(p.MarshalCedar())
	var out []string
	for _, e := range errs {
		for _, msg := range strings.Split(e.Error(), "\n") {
			msg = policyPrefix.ReplaceAllString(msg, "")
			if msg == "" || optionalAttr.MatchString(msg) {
				continue
			}
			if m := contextAttr.FindStringSubmatch(msg); m != nil && !contextKeys[m[1]] && readsArg(text, m[1]) {
				continue
			}
			out = append(out, msg)
		}
	}
	return strings.Join(out, "; ")
}

// readsArg reports whether a policy's text reads argument name of
// context.args (context.args.name, context.args["name"]).
func readsArg(text, name string) bool {
	q := regexp.QuoteMeta(name)
	return regexp.MustCompile(`args\s*(\.\s*` + q + `\b|\[\s*"` + q + `"\s*\])`).MatchString(text)
}

// schemaError is the FileError of a policy the schema refuses.
func schemaError(file string, p *cedar.Policy, problem string) error {
	pos := p.Position()
	return &FileError{File: file, Line: pos.Line, Col: pos.Column, Message: fmt.Sprintf("the policy does not fit wield's model (wield policy schema): %s", problem)}
}
