package toolfile

import (
	"encoding/base64"
	"encoding/json"
	"github.com/google/jsonschema-go/jsonschema"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wieldhq/wield/internal/gotmpl"
	"github.com/wieldhq/wield/internal/schemadec"
	"go.yaml.in/yaml/v3"
)

// MCPConfig is the `mcp:` section of wield.yaml: what `wield serve` offers
// MCP clients besides the tools.
//
//	mcp:
//	  resources:
//	    - {uri: "docs://readme", name: readme, mime_type: text/markdown, file: README.md}
//	    - {uri: "img://logo", name: logo, mime_type: image/png, blob_base64: "iVBOR..."}
//	    - {uri: "note://hello", name: hello, text: "Hello"}
//	  resource_templates:
//	    - uri_template: "notes://{id}/text"
//	      name: note
//	      mime_type: text/plain
//	      text: "Note {{.id}}"              # a Go template of the URI's variables
//	      completions: {id: ["1", "2"]}     # offered by completion/complete
//	  prompts:
//	    - name: review
//	      description: Review a change
//	      arguments:
//	        - {name: language, required: true, values: [go, python]}   # values: completions
//	      messages:
//	        - {role: user, text: "Review this {{.language}} change."}
//	        - {role: user, type: image, mime_type: image/png, file: diagram.png}
//	        - {role: user, type: resource, uri: "docs://readme", mime_type: text/plain, text: "..."}
//
// Texts and URIs of messages are Go templates of the arguments. Files are
// relative to the config file's folder: a resource's file is read at each
// read (and clients subscribed to it are told when it changes), a
// message's when the configuration loads.
//
// The HTTP sessions of MCP clients are bounded (zero means the default):
//
//	mcp:
//	  session_idle: 10m              # a session without a request for that long is closed
//	  max_sessions: 5000             # open at once, on every endpoint together
//	  max_sessions_per_client: 100   # of one API key, or of one IP address without keys
//	  request_state_ttl: 10m         # an approval asked in the protocol is answered within it
//	  task_after: 30s                # a call of a client that speaks tasks becomes one past it (0: never)
//	  instructions: "Use calculator for arithmetic."   # told to clients as they connect
type MCPConfig struct {
	Resources         []MCPResource
	ResourceTemplates []MCPResourceTemplate
	Prompts           []MCPPrompt
	// SessionIdle, MaxSessions and MaxSessionsPerClient bound the HTTP
	// sessions (session_idle, max_sessions, max_sessions_per_client).
	SessionIdle                       time.Duration
	MaxSessions, MaxSessionsPerClient int
	// RequestStateTTL bounds how long the requestState of an
	// input_required answer (an approval asked in the protocol) is
	// accepted (request_state_ttl; 10m when zero).
	RequestStateTTL time.Duration
	// TaskAfter is how long a tools/call of a 2026-07-28 client that
	// declared the Tasks extension may run before it is answered with a
	// task (task_after): nil when the key is absent (the server's
	// default), zero to make no such task.
	TaskAfter *time.Duration
	// Instructions are what the server tells clients when they connect
	// (instructions; the result of initialize, or of server/discover):
	// how to use its tools, for the client's model. Empty says nothing.
	Instructions string
}

// MCPResource is one resource of [MCPConfig]: Text, Blob or File.
type MCPResource struct {
	URI, Name, Title, Description, MIMEType string
	Text                                    string
	Blob                                    []byte
	File                                    string
}

// MCPResourceTemplate is one resource template of [MCPConfig].
type MCPResourceTemplate struct {
	URITemplate, Name, Title, Description, MIMEType string
	Text                                            string
	Completions                                     map[string][]string
}

// MCPPrompt is one prompt of [MCPConfig].
type MCPPrompt struct {
	Name, Title, Description string
	Arguments                []MCPPromptArgument
	Messages                 []MCPPromptMessage
	// Elicit are questions to the client's user, asked before the
	// messages are filled in (their answers under As).
	Elicit []MCPPromptQuestion
}

// MCPPromptQuestion is a question a prompt asks the client's user: its
// answer ({action, content}) is the template value As.
type MCPPromptQuestion struct {
	As, Message string
	Schema      json.RawMessage // a JSON Schema object; nil for none
}

// MCPPromptArgument is one argument of a prompt; Values are offered as
// completions.
type MCPPromptArgument struct {
	Name, Title, Description string
	Required                 bool
	Values                   []string
}

// MCPPromptMessage is one message of a prompt: a role and one content item.
type MCPPromptMessage struct {
	Role    string
	Content MCPContent
}

// MCPContent is one item of MCP content: Type is text (the default),
// image, audio, resource (embedded) or resource_link.
type MCPContent struct {
	Type, Text, MIMEType, URI, Name string
	Data                            []byte
}

// mcpTplFuncs names the functions templates may call, for parsing; the
// server supplies the same names.
var mcpTplFuncs = map[string]gotmpl.Func{"json": {Args: 1}}

// mcpURIVar is a URI template's {name}.
var mcpURIVar = regexp.MustCompile(`\{[A-Za-z0-9_]+\}`)

func (c *configDecoder) mcpConfig(mf field, dir string) MCPConfig {
	var out MCPConfig
	fs, ok := c.mapping(mf.val, "mcp")
	if !ok {
		return out
	}
	for _, f := range fs {
		switch f.name {
		case "session_idle":
			out.SessionIdle = c.dur(f, time.Second)
			continue
		case "max_sessions":
			out.MaxSessions = c.integer(f)
			continue
		case "max_sessions_per_client":
			out.MaxSessionsPerClient = c.integer(f)
			continue
		case "request_state_ttl":
			out.RequestStateTTL = c.dur(f, time.Second)
			continue
		case "task_after":
			d := c.dur(f, time.Second)
			out.TaskAfter = &d
			continue
		case "instructions":
			out.Instructions = c.str(f)
			continue
		case "resources", "resource_templates", "prompts":
		default:
			c.unknown(f, "mcp")
			continue
		}
		list, ok := seq(f.val)
		if !ok {
			c.errorf(f.val, "mcp.%s: expected a list, got %s", f.name, kindName(f.val))
			continue
		}
		seen := map[string]bool{}
		for _, n := range list {
			switch f.name {
			case "resources":
				if r, ok := c.mcpResource(n, dir); ok && c.mcpOnce(n, seen, "resource", r.URI) {
					out.Resources = append(out.Resources, r)
				}
			case "resource_templates":
				if t, ok := c.mcpTemplate(n); ok && c.mcpOnce(n, seen, "resource template", t.URITemplate) {
					out.ResourceTemplates = append(out.ResourceTemplates, t)
				}
			case "prompts":
				if p, ok := c.mcpPrompt(n, dir); ok && c.mcpOnce(n, seen, "prompt", p.Name) {
					out.Prompts = append(out.Prompts, p)
				}
			}
		}
	}
	return out
}

// mcpOnce reports whether key is new, with a problem when it is not.
func (c *configDecoder) mcpOnce(n *yaml.Node, seen map[string]bool, what, key string) bool {
	if seen[key] {
		c.errorf(n, "mcp: %s %q defined twice", what, key)
		return false
	}
	seen[key] = true
	return true
}

// mcpTpl reads a string that must parse as a Go template.
func (c *configDecoder) mcpTpl(f field, what string) string {
	s := c.str(f)
	if strings.Contains(s, "{{") {
		if _, err := gotmpl.Parse(what, s, mcpTplFuncs); err != nil {
			c.errorf(f.val, "%s: %s: %v", what, f.name, err)
		}
	}
	return s
}

func (c *configDecoder) mcpResource(n *yaml.Node, dir string) (MCPResource, bool) {
	var r MCPResource
	fs, ok := c.mapping(n, "mcp resource")
	if !ok {
		return r, false
	}
	mark := len(c.problems)
	sources := 0
	for _, f := range fs {
		switch f.name {
		case "uri":
			r.URI = c.str(f)
		case "name":
			r.Name = c.str(f)
		case "title":
			r.Title = c.str(f)
		case "description":
			r.Description = c.str(f)
		case "mime_type":
			r.MIMEType = c.str(f)
		case "text":
			sources++
			r.Text = c.str(f)
		case "blob_base64":
			sources++
			r.Blob = c.base64(f)
		case "file":
			sources++
			r.File = c.file(f, dir)
		default:
			c.unknown(f, "mcp resource")
		}
	}
	at := start(n, fs)
	switch {
	case r.URI == "" || r.Name == "":
		c.errorf(at, "mcp resource: uri and name are required")
	case sources != 1:
		c.errorf(at, "mcp resource %s: needs one of text, blob_base64 and file", r.URI)
	}
	return r, !c.failed(mark)
}

func (c *configDecoder) base64(f field) []byte {
	s := c.str(f)
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		c.errorf(f.val, "%s: not base64: %v", f.name, err)
	}
	return b
}

// file resolves a path against dir and checks that it can be read.
func (c *configDecoder) file(f field, dir string) string {
	p := c.str(f)
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		c.errorf(f.val, "%s: %q is not a file that can be read", f.name, p)
	}
	return p
}

func (c *configDecoder) mcpTemplate(n *yaml.Node) (MCPResourceTemplate, bool) {
	var t MCPResourceTemplate
	fs, ok := c.mapping(n, "mcp resource template")
	if !ok {
		return t, false
	}
	mark := len(c.problems)
	var uriField *field
	for i, f := range fs {
		switch f.name {
		case "uri_template":
			t.URITemplate = c.str(f)
			uriField = &fs[i]
		case "name":
			t.Name = c.str(f)
		case "title":
			t.Title = c.str(f)
		case "description":
			t.Description = c.str(f)
		case "mime_type":
			t.MIMEType = c.str(f)
		case "text":
			t.Text = c.mcpTpl(f, "mcp resource template")
		case "completions":
			cs, ok := c.mapping(f.val, "completions")
			if !ok {
				continue
			}
			t.Completions = make(map[string][]string, len(cs))
			for _, cf := range cs {
				t.Completions[cf.name] = c.strings(cf)
			}
		default:
			c.unknown(f, "mcp resource template")
		}
	}
	at := start(n, fs)
	if t.URITemplate == "" || t.Name == "" {
		c.errorf(at, "mcp resource template: uri_template and name are required")
	} else if strings.ContainsAny(mcpURIVar.ReplaceAllString(t.URITemplate, ""), "{}") {
		c.errorf(uriField.val, "mcp resource template %s: only {name} variables are supported", t.URITemplate)
	}
	for v := range t.Completions {
		if !strings.Contains(t.URITemplate, "{"+v+"}") {
			c.errorf(at, "mcp resource template %s: completions for %q, which is not a variable", t.URITemplate, v)
		}
	}
	return t, !c.failed(mark)
}

func (c *configDecoder) mcpPrompt(n *yaml.Node, dir string) (MCPPrompt, bool) {
	var p MCPPrompt
	fs, ok := c.mapping(n, "mcp prompt")
	if !ok {
		return p, false
	}
	mark := len(c.problems)
	var asked []*yaml.Node // each elicit question's node, for the checks below
	for _, f := range fs {
		switch f.name {
		case "name":
			p.Name = c.str(f)
		case "title":
			p.Title = c.str(f)
		case "description":
			p.Description = c.str(f)
		case "elicit":
			list, ok := seq(f.val)
			if !ok {
				c.errorf(f.val, "mcp prompt: elicit: expected a list, got %s", kindName(f.val))
				continue
			}
			for _, v := range list {
				var q struct {
					As      string         `yaml:"as"`
					Message string         `yaml:"message"`
					Schema  map[string]any `yaml:"schema"`
				}
				if err := v.Decode(&q); err != nil || q.As == "" || q.Message == "" {
					c.errorf(v, "mcp prompt: elicit: each question needs as, message and, optionally, a schema object")
					continue
				}
				pq := MCPPromptQuestion{As: q.As, Message: q.Message}
				if q.Schema != nil {
					b, err := json.Marshal(q.Schema)
					if err == nil {
						// As the server reads it, so that validate
						// finds what serve would refuse.
						var js *jsonschema.Schema
						if js, err = schemadec.Decode(b); err == nil && js != nil {
							_, err = js.Resolve(nil)
						}
					}
					if err != nil {
						c.errorf(v, "mcp prompt: elicit: schema: %v", err)
						continue
					}
					pq.Schema = b
				}
				p.Elicit = append(p.Elicit, pq)
				asked = append(asked, v)
			}
		case "arguments", "messages":
			list, ok := seq(f.val)
			if !ok {
				c.errorf(f.val, "mcp prompt: %s: expected a list, got %s", f.name, kindName(f.val))
				continue
			}
			for _, v := range list {
				if f.name == "arguments" {
					p.Arguments = append(p.Arguments, c.mcpArgument(v))
				} else {
					p.Messages = append(p.Messages, c.mcpMessage(v, dir))
				}
			}
		default:
			c.unknown(f, "mcp prompt")
		}
	}
	at := start(n, fs)
	if p.Name == "" {
		c.errorf(at, "mcp prompt: name is required")
	}
	if len(p.Messages) == 0 {
		c.errorf(at, "mcp prompt %s: needs messages", p.Name)
	}
	seen := map[string]bool{}
	for _, a := range p.Arguments {
		if seen[a.Name] {
			c.errorf(at, "mcp prompt %s: argument %q defined twice", p.Name, a.Name)
		}
		seen[a.Name] = true
	}
	keys := map[string]bool{}
	for i, q := range p.Elicit {
		switch {
		case seen[q.As]:
			// Messages read answers and arguments from one map.
			c.errorf(asked[i], "mcp prompt %s: elicit: as %q is also an argument's name", p.Name, q.As)
		case keys[q.As]:
			c.errorf(asked[i], "mcp prompt %s: elicit: as %q names another question too", p.Name, q.As)
		}
		keys[q.As] = true
	}
	return p, !c.failed(mark)
}

func (c *configDecoder) mcpArgument(n *yaml.Node) MCPPromptArgument {
	var a MCPPromptArgument
	fs, ok := c.mapping(n, "mcp prompt argument")
	if !ok {
		return a
	}
	for _, f := range fs {
		switch f.name {
		case "name":
			a.Name = c.str(f)
		case "title":
			a.Title = c.str(f)
		case "description":
			a.Description = c.str(f)
		case "required":
			a.Required = c.flag(f)
		case "values":
			a.Values = c.strings(f)
		default:
			c.unknown(f, "mcp prompt argument")
		}
	}
	if a.Name == "" {
		c.errorf(start(n, fs), "mcp prompt argument: name is required")
	}
	return a
}

// mcpContentTypes are the types of MCP content.
var mcpContentTypes = map[string]bool{"text": true, "image": true, "audio": true, "resource": true, "resource_link": true}

func (c *configDecoder) mcpMessage(n *yaml.Node, dir string) MCPPromptMessage {
	var m MCPPromptMessage
	fs, ok := c.mapping(n, "mcp prompt message")
	if !ok {
		return m
	}
	ct := &m.Content
	ct.Type = "text"
	hasData := false
	for _, f := range fs {
		switch f.name {
		case "role":
			m.Role = c.str(f)
			if m.Role != "user" && m.Role != "assistant" {
				c.errorf(f.val, "mcp prompt message: role %q is not user or assistant", m.Role)
			}
		case "type":
			ct.Type = c.str(f)
			if !mcpContentTypes[ct.Type] {
				c.errorf(f.val, "mcp prompt message: type %q is not text, image, audio, resource or resource_link", ct.Type)
			}
		case "text":
			ct.Text = c.mcpTpl(f, "mcp prompt message")
		case "uri":
			ct.URI = c.mcpTpl(f, "mcp prompt message")
		case "name":
			ct.Name = c.str(f)
		case "mime_type":
			ct.MIMEType = c.str(f)
		case "data_base64":
			hasData = true
			ct.Data = c.base64(f)
		case "file":
			hasData = true
			if p := c.file(f, dir); p != "" {
				ct.Data, _ = os.ReadFile(p) // checked by file
			}
		default:
			c.unknown(f, "mcp prompt message")
		}
	}
	at := start(n, fs)
	if m.Role == "" {
		c.errorf(at, "mcp prompt message: role is required")
	}
	switch ct.Type {
	case "image", "audio":
		if !hasData || ct.MIMEType == "" {
			c.errorf(at, "mcp prompt message: %s content needs data_base64 or file, and mime_type", ct.Type)
		}
	case "resource":
		if ct.URI == "" {
			c.errorf(at, "mcp prompt message: resource content needs a uri")
		}
	case "resource_link":
		if ct.URI == "" || ct.Name == "" {
			c.errorf(at, "mcp prompt message: resource_link content needs a uri and a name")
		}
	}
	return m
}
