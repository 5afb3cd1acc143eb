package mcpbench

import (
	"encoding/json"
	"net/http"

	"github.com/wieldhq/wield"
)

// plainProtocols are the revisions the plain server accepts in
// initialize; anything else is answered with the latest, as the
// specification lets a server do.
var plainProtocols = map[string]bool{"2025-11-25": true, "2025-06-18": true, "2025-03-26": true, "2024-11-05": true}

// plainRequest is a JSON-RPC request as the plain server reads it.
type plainRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// plainResponse is a JSON-RPC response: a result or an error.
type plainResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *plainError     `json:"error,omitempty"`
}

type plainError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type plainContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type plainCallResult struct {
	Content           []plainContent `json:"content"`
	StructuredContent EchoOut        `json:"structuredContent"`
}

// plain is the floor every MCP server is measured against: what a
// hand-written net/http + encoding/json server of the same tools does,
// stateless (no session), answering in application/json. /mcp answers
// initialize, notifications (202), tools/list (every tool of listed, in
// one page) and tools/call of any listed tool as echo (decode the
// arguments into [EchoIn], answer [EchoOut] as text and structured
// content); /v1/tools/echo/call answers a REST call of echo in the shape
// of wield's API, as httpapi's reference handler does. It keeps each
// tool as a [listedTool], schemas as JSON text, and encodes the list
// anew at every tools/list, as a server reading its tools from files
// would.
func plain(listed []listedTool) http.Handler {
	names := make(map[string]bool, len(listed))
	for _, t := range listed {
		names[t.Name] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		var req plainRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.JSONRPC != "2.0" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.ID == nil { // a notification
			w.WriteHeader(http.StatusAccepted)
			return
		}
		resp := plainResponse{JSONRPC: "2.0", ID: req.ID}
		switch req.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil {
				resp.Error = &plainError{-32602, "invalid params"}
				break
			}
			if !plainProtocols[p.ProtocolVersion] {
				p.ProtocolVersion = "2025-11-25"
			}
			resp.Result = map[string]any{
				"protocolVersion": p.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "plain", "version": "1"},
			}
		case "ping":
			resp.Result = struct{}{}
		case "tools/list":
			resp.Result = struct {
				Tools []listedTool `json:"tools"`
			}{listed}
		case "tools/call":
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(req.Params, &p); err != nil || !names[p.Name] {
				resp.Error = &plainError{-32602, "unknown tool"}
				break
			}
			var in EchoIn
			if err := json.Unmarshal(p.Arguments, &in); err != nil {
				resp.Error = &plainError{-32602, "invalid arguments"}
				break
			}
			out := EchoOut{Echo: in.Message}
			text, _ := json.Marshal(out)
			resp.Result = plainCallResult{Content: []plainContent{{"text", string(text)}}, StructuredContent: out}
		default:
			resp.Error = &plainError{-32601, "method not found"}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	mux.HandleFunc("POST /v1/tools/echo/call", plainREST)
	return mux
}

// plainREST is a plain net/http JSON handler of the same shape as a REST
// call of echo: decode the arguments, answer them back in a result.
func plainREST(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var args struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(req.Arguments, &args); err != nil {
		http.Error(w, "bad arguments", http.StatusBadRequest)
		return
	}
	out, _ := json.Marshal(args)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		CallID string          `json:"call_id"`
		Tool   string          `json:"tool"`
		OK     bool            `json:"ok"`
		Output json.RawMessage `json:"output"`
	}{wield.NewID(), "echo", true, out})
}
