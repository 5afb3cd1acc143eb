package httpapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// OpenAPI is the OpenAPI 3.1 document of the API, as GET /openapi.json
// serves it. Tests hold it to the routes the server serves and to the
// answers it gives ([CheckAnswer]).
//
//go:embed openapi.json
var OpenAPI []byte

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(OpenAPI)
	return nil
}

// openAPIDoc is the part of the document the checks read.
type openAPIDoc struct {
	Paths      map[string]map[string]openAPIOperation `json:"paths"`
	Components struct {
		Schemas   map[string]json.RawMessage `json:"schemas"`
		Responses map[string]openAPIResponse `json:"responses"`
	} `json:"components"`
}

type openAPIOperation struct {
	Responses map[string]openAPIResponse `json:"responses"`
}

type openAPIResponse struct {
	Ref     string `json:"$ref"`
	Content map[string]struct {
		Schema json.RawMessage `json:"schema"`
	} `json:"content"`
}

var (
	docOnce sync.Once
	doc     openAPIDoc
	docErr  error
	checks  sync.Map // "METHOD path status" -> *jsonschema.Resolved
)

func loadDoc() (*openAPIDoc, error) {
	docOnce.Do(func() { docErr = json.Unmarshal(OpenAPI, &doc) })
	return &doc, docErr
}

// DocumentedRoutes lists the operations of the document as "METHOD path",
// sorted.
func DocumentedRoutes() ([]string, error) {
	d, err := loadDoc()
	if err != nil {
		return nil, fmt.Errorf("read openapi.json: %w", err)
	}
	var out []string
	for p, ops := range d.Paths {
		for m := range ops {
			switch m {
			case "get", "post", "put", "patch", "delete":
				out = append(out, strings.ToUpper(m)+" "+p)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// matchPath finds the document's path template that a concrete path fits.
func matchPath(d *openAPIDoc, path string) (string, bool) {
	segs := strings.Split(path, "/")
	for tmpl := range d.Paths {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		ok := true
		for i := range ts {
			if ts[i] != segs[i] && !(strings.HasPrefix(ts[i], "{") && segs[i] != "") {
				ok = false
				break
			}
		}
		if ok {
			return tmpl, true
		}
	}
	return "", false
}

// CheckAnswer reports whether a JSON answer of the API fits the document:
// the path (without query) and method are documented, the status is one
// the operation lists (or its default), and the body validates against the
// response's schema. An error answer to an undocumented path or method must
// be an Error. Clients and tests use it to hold the server to its
// contract.
func CheckAnswer(method, path string, status int, body []byte) error {
	d, err := loadDoc()
	if err != nil {
		return fmt.Errorf("check answer: read openapi.json: %w", err)
	}
	tmpl, ok := matchPath(d, path)
	op, opOK := d.Paths[tmpl][strings.ToLower(method)]
	code := strconv.Itoa(status)
	var resp openAPIResponse
	switch {
	case (!ok || !opOK) && status >= 400:
		// An error answer to what the document does not list (an
		// unknown path, a method a path does not take) is an Error.
		tmpl, code = "(undocumented)", "default"
		resp = openAPIResponse{Ref: "#/components/responses/Error"}
	case !ok:
		return fmt.Errorf("check answer: path %s is not documented", path)
	case !opOK:
		return fmt.Errorf("check answer: %s %s is not documented", method, tmpl)
	default:
		if resp, ok = op.Responses[code]; !ok {
			if resp, ok = op.Responses["default"]; !ok || status < 400 {
				return fmt.Errorf("check answer: %s %s does not document status %d", method, tmpl, status)
			}
			code = "default"
		}
	}
	if name, ok := strings.CutPrefix(resp.Ref, "#/components/responses/"); ok {
		resp = d.Components.Responses[name]
	}
	media, ok := resp.Content["application/json"]
	if !ok {
		return fmt.Errorf("check answer: %s %s %s is not documented as JSON", method, tmpl, code)
	}
	key := method + " " + tmpl + " " + code
	rs, _ := checks.Load(key)
	if rs == nil {
		compiled, err := compileSchema(d, media.Schema)
		if err != nil {
			return fmt.Errorf("check answer: %s: %w", key, err)
		}
		rs, _ = checks.LoadOrStore(key, compiled)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("check answer: %s: body is not JSON: %w", key, err)
	}
	if err := rs.(*jsonschema.Resolved).Validate(v); err != nil {
		return fmt.Errorf("check answer: %s: %w", key, err)
	}
	return nil
}

// compileSchema resolves a response schema with the document's component
// schemas as its $defs.
func compileSchema(d *openAPIDoc, raw json.RawMessage) (*jsonschema.Resolved, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, err
	}
	defs, err := json.Marshal(d.Components.Schemas)
	if err != nil {
		return nil, err
	}
	root["$defs"] = defs
	b, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	b = []byte(strings.ReplaceAll(string(b), "#/components/schemas/", "#/$defs/"))
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}
