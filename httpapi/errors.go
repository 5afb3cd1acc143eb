package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/artifact"
	"github.com/wieldhq/wield/internal/jsonenc"
)

// The error codes of the API. They are stable: clients branch on them. A
// tool's failure is not an API error: it is a 200 answer whose result has
// ok false and an error_type.
const (
	CodeBadRequest       = "bad_request"        // 400: a malformed body, parameter or header
	CodeUnauthorized     = "unauthorized"       // 401: no key, or a key the server does not know
	CodeForbidden        = "forbidden"          // 403: the key lacks the right or the tool's toolset
	CodeNotFound         = "not_found"          // 404: no such route, tool, call, approval or artifact
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeConflict         = "conflict"           // 409: an artifact changed since the version read
	CodeAlreadyDecided   = "already_decided"    // 409: the approval is no longer pending
	CodeDigestMismatch   = "digest_mismatch"    // 409: the decision names other arguments
	CodeCallIDTaken      = "call_id_taken"      // 409: another call has the call's chosen ID; nothing ran
	CodeTooLarge         = "too_large"          // 413: the body is over the limit
	CodeUnprocessable    = "unprocessable"      // 422: an artifact fragment not found or ambiguous
	CodeTooManyStreams   = "too_many_streams"   // 429: the client holds the most event streams allowed
	CodeUnavailable      = "unavailable"        // 503: shutting down, or the store is unreachable
	CodeInternal         = "internal"           // 500: the server failed; the message says no more
)

// Error is the API's one error shape, {"error":{"code":...,"message":...}},
// as the server writes it and as the [Client] returns it. Status is the
// HTTP status it came with.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error formats the code and message, as "httpapi: code: message".
func (e *Error) Error() string {
	return "httpapi: " + e.Code + ": " + e.Message
}

// Is lets a [Client]'s caller test an answer with errors.Is against the
// wield error it stands for: call_id_taken is [wield.ErrCallIDTaken].
func (e *Error) Is(target error) bool {
	return target == wield.ErrCallIDTaken && e.Code == CodeCallIDTaken
}

type errorBody struct {
	Error *Error `json:"error"`
}

// apiError is an error a handler returns to say exactly what the client
// sees.
func apiError(status int, code, msg string) *Error {
	return &Error{Status: status, Code: code, Message: msg}
}

// writeError answers with err: an *Error as it is, the store's and the
// artifact manager's known errors with their codes, anything else as a 500
// "internal error" whose real text goes to the log only.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	switch {
	case errors.As(err, &e):
	case errors.Is(err, wield.ErrNotFound):
		e = apiError(http.StatusNotFound, CodeNotFound, notFoundMessage(r))
	case errors.Is(err, wield.ErrAlreadyDecided):
		e = apiError(http.StatusConflict, CodeAlreadyDecided, "the approval is no longer pending: it was decided or it expired")
	case errors.Is(err, wield.ErrDigestMismatch):
		e = apiError(http.StatusConflict, CodeDigestMismatch, "the digest is not that of the pending call's arguments")
	case errors.Is(err, wield.ErrCallIDTaken):
		e = apiError(http.StatusConflict, CodeCallIDTaken, msgCallIDTaken)
	case errors.Is(err, wield.ErrConflict):
		e = apiError(http.StatusConflict, CodeConflict, "the artifact changed since the version read")
	case errors.Is(err, artifact.ErrNoMatch), errors.Is(err, artifact.ErrAmbiguous):
		// The manager's messages are written for the model that sent the
		// fragment: they say what to send instead and quote only the
		// artifact's own text.
		e = apiError(http.StatusUnprocessableEntity, CodeUnprocessable, err.Error())
	case errors.Is(err, wield.ErrClosed):
		e = apiError(http.StatusServiceUnavailable, CodeUnavailable, "the server is shutting down")
	default:
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed", slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.String("err", err.Error()))
		e = apiError(http.StatusInternalServerError, CodeInternal, "internal error")
	}
	writeJSON(w, e.Status, errorBody{e})
}

// writeJSON writes v as the JSON body of a response with the status,
// through internal/jsonenc: text in answers (a call's output, an error
// message) keeps <, > and & as they are, for the model or person reading it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		// Every value the API writes marshals; this is a programmer error.
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
		status = http.StatusInternalServerError
	}
	writeBody(w, status, b)
}

// writeBody writes b, which is JSON, as the body of a response.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h["X-Content-Type-Options"] = nosniff
	w.WriteHeader(status)
	b = append(b, '\n')
	_, _ = w.Write(b)
}

// The header values every JSON answer has, allocated once.
var (
	jsonType = []string{"application/json"}
	nosniff  = []string{"nosniff"}
)

// notFoundKinds name what a route's {id} is, by the route's first segment
// after /v1/.
var notFoundKinds = map[string]string{"calls": "call", "approvals": "approval", "artifacts": "artifact", "keys": "key"}

// notFoundMessage says what the request named that is not there: "no
// such call" (the ID is the request's own). The words are the same whether
// it does not exist or is out of the key's sight, and for every ID.
func notFoundMessage(r *http.Request) string {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	kind, _, _ := strings.Cut(rest, "/")
	what := notFoundKinds[kind]
	if !ok || r.PathValue("id") == "" || what == "" {
		return "not found"
	}
	if what == "artifact" && r.URL.Query().Has("version") {
		return "no such artifact, or no such version of it"
	}
	return "no such " + what
}
