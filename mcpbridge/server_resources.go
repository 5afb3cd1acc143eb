package mcpbridge

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wieldhq/wield/internal/safetext"
)

// Resource is a resource a [Server] offers besides its tools
// ([ServerOptions].Resources): fixed text or bytes, or a file read at each
// resources/read (as text when it is valid UTF-8, else as a blob). Clients
// may subscribe to it; they are told when a File changes (see
// [ServerOptions].ResourcePoll), and of any resource when
// [Server.ResourceUpdated] is called.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// One of Text, Blob and File.
	Text string
	Blob []byte
	File string
}

// ResourceTemplate is a family of resources named by a URI template
// ([ServerOptions].ResourceTemplates) such as "notes://{id}/text": each
// {name} matches one path segment (no "/", "?" or "#"). The text of a
// resource read is Text, a Go template of the variables ({{.id}}). Its
// resources are made at each read: they cannot be subscribed to.
// Completions lists the values offered for each variable by
// completion/complete.
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Text        string
	Completions map[string][]string
}

// resTemplate is a template ready to serve: its pattern and its text.
type resTemplate struct {
	ResourceTemplate
	re   *regexp.Regexp
	vars []string
	text tplText
}

// resVar is a URI template's {name}.
var resVar = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// resCompile turns a URI template into a pattern of its variables.
func resCompile(rt ResourceTemplate) (*resTemplate, error) {
	if rt.URITemplate == "" || rt.Name == "" {
		return nil, fmt.Errorf("resource template %q: needs a uri_template and a name", rt.URITemplate)
	}
	out := &resTemplate{ResourceTemplate: rt}
	var pat strings.Builder
	pat.WriteString("^")
	last := 0
	for _, m := range resVar.FindAllStringSubmatchIndex(rt.URITemplate, -1) {
		pat.WriteString(regexp.QuoteMeta(rt.URITemplate[last:m[0]]))
		pat.WriteString(`([^/?#]+)`)
		out.vars = append(out.vars, rt.URITemplate[m[2]:m[3]])
		last = m[1]
	}
	pat.WriteString(regexp.QuoteMeta(rt.URITemplate[last:]))
	pat.WriteString("$")
	if strings.ContainsAny(resVar.ReplaceAllString(rt.URITemplate, ""), "{}") {
		return nil, fmt.Errorf("resource template %q: only {name} variables are supported", rt.URITemplate)
	}
	re, err := regexp.Compile(pat.String())
	if err != nil {
		return nil, fmt.Errorf("resource template %q: %w", rt.URITemplate, err)
	}
	out.re = re
	if out.text, err = newTplText("resource template "+rt.Name, rt.Text); err != nil {
		return nil, err
	}
	return out, nil
}

// match returns the variables of uri, or false when uri is not of the
// template.
func (t *resTemplate) match(uri string) (map[string]any, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]any, len(t.vars))
	for i, name := range t.vars {
		vars[name] = m[i+1]
	}
	return vars, true
}

// srvAddResources adds the configured resources and templates to an
// endpoint. Templates were compiled by NewServer.
func (s *Server) srvAddResources(ep *srvEndpoint) {
	for _, r := range s.opts.Resources {
		ep.mcp.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return s.resReadFixed(r, req.Params.URI)
			})
	}
	for _, t := range s.templates {
		ep.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				vars, ok := t.match(req.Params.URI)
				if !ok {
					return nil, mcp.ResourceNotFoundError(req.Params.URI)
				}
				text, err := t.text.render(vars)
				if err != nil {
					s.log.Error("mcp server: resource template", "uri", req.Params.URI, "err", err)
					return nil, srvInternal
				}
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: t.MIMEType, Text: text}}}, nil
			})
	}
}

// resReadFixed reads a configured resource.
func (s *Server) resReadFixed(r Resource, uri string) (*mcp.ReadResourceResult, error) {
	rc := &mcp.ResourceContents{URI: uri, MIMEType: r.MIMEType}
	switch {
	case r.File != "":
		b, err := os.ReadFile(r.File)
		if err != nil {
			s.log.Error("mcp server: read resource file", "uri", uri, "err", err)
			return nil, srvInternal
		}
		if utf8.Valid(b) {
			rc.Text = string(b)
		} else {
			rc.Blob = b
		}
	case r.Blob != nil:
		rc.Blob = r.Blob
	default:
		rc.Text = r.Text
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
}

// srvSubscribe accepts subscriptions to the configured resources; the SDK
// keeps track of who subscribed to what. Only to those: the SDK keeps each
// URI subscribed to in a map it never shrinks (a closed session leaves the
// URI behind), so a URI a template matches, any of countless and of any
// length, would let a client grow the server's memory for its whole life;
// and a template's resources are made at each read, never changing.
func (s *Server) srvSubscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	for _, r := range s.opts.Resources {
		if r.URI == uri {
			return nil
		}
	}
	for _, t := range s.templates {
		if _, ok := t.match(uri); ok {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
				"resource %s is made by the template %s at each read and never changes: only the listed resources (resources/list) can be subscribed to",
				safetext.Clip(uri, 200), t.URITemplate)}
		}
	}
	return mcp.ResourceNotFoundError(uri)
}

func (s *Server) srvUnsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }

// ResourceUpdated tells the clients subscribed to uri, on every endpoint,
// that it changed (for a file resource, say, after the file was written).
// The error is the first transport's.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) error {
	var first error
	for _, ep := range s.srvEndpoints() {
		if err := ep.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil && first == nil {
			first = fmt.Errorf("resource updated: %w", err)
		}
	}
	return first
}

// srvComplete answers completion/complete from the values configured for
// prompt arguments and template variables, those that start with what the
// user typed (ignoring case).
func (s *Server) srvComplete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion: missing ref"}
	}
	var values []string
	switch p.Ref.Type {
	case "ref/prompt":
		pr, ok := s.prompts[p.Ref.Name]
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion: unknown prompt %q", p.Ref.Name)}
		}
		for _, a := range pr.Arguments {
			if a.Name == p.Argument.Name {
				values = a.Values
			}
		}
	case "ref/resource":
		for _, t := range s.templates {
			if t.URITemplate == p.Ref.URI {
				values = t.Completions[p.Argument.Name]
			}
		}
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion: unknown ref type %q", p.Ref.Type)}
	}
	prefix := strings.ToLower(p.Argument.Value)
	out := []string{}
	for _, v := range values {
		if strings.HasPrefix(strings.ToLower(v), prefix) {
			out = append(out, v)
		}
	}
	total := len(out)
	const most = 100 // what MCP allows in one answer
	more := total > most
	if more {
		out = slices.Clone(out[:most])
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: total, HasMore: more}}, nil
}

// resWatch checks the files of the configured resources every
// ResourcePoll and tells subscribers of those that changed (their size or
// modification time), until the returned function is called.
func (s *Server) resWatch() (stop func()) {
	type stamp struct {
		size int64
		mod  time.Time
	}
	files := map[string]string{} // URI to path
	for _, r := range s.opts.Resources {
		if r.File != "" {
			files[r.URI] = r.File
		}
	}
	every := s.opts.ResourcePoll
	if every == 0 {
		every = 2 * time.Second
	}
	if len(files) == 0 || every < 0 {
		return func() {}
	}
	look := func(path string) stamp {
		st, err := os.Stat(path)
		if err != nil {
			return stamp{size: -1}
		}
		return stamp{st.Size(), st.ModTime()}
	}
	seen := make(map[string]stamp, len(files))
	for uri, path := range files {
		seen[uri] = look(path)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for uri, path := range files {
				if now := look(path); now != seen[uri] {
					seen[uri] = now
					if err := s.ResourceUpdated(ctx, uri); err != nil && ctx.Err() == nil {
						s.log.Warn("mcp server: resource updated", "uri", uri, "err", err)
					}
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
