package mcpbridge

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// impLegacyMeta lets a server of MCP 2025-03-26 authorize the importer.
// Such a server has no protected resource metadata: its authorization
// base URL is its origin, where its authorization server metadata is
// read, and that specification does not ask the metadata's issuer to be
// the origin (an authorization server mounted under /oauth says issuer
// https://host/oauth). The SDK checks the issuer as RFC 8414 does for
// metadata found by the newer discovery, and refuses. So, for the
// metadata at the MCP server's own origin, and only while no protected
// resource metadata of that origin has been found, an issuer on the same
// origin is read as the origin: no other origin gains anything, which is
// what the check is there for (mix-up attacks).
type impLegacyMeta struct {
	base   http.RoundTripper
	origin string      // scheme://host[:port] of the MCP server
	prm    atomic.Bool // a protected resource metadata document of the origin was found
}

// impOrigin is scheme://host[:port] of u, or "".
func impOrigin(u *url.URL) string {
	if u == nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

func (t *impLegacyMeta) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || impOrigin(r.URL) != t.origin {
		return resp, err
	}
	path := r.URL.Path
	if strings.HasPrefix(path, "/.well-known/oauth-protected-resource") && resp.StatusCode == http.StatusOK {
		t.prm.Store(true)
		return resp, nil
	}
	if (path != "/.well-known/oauth-authorization-server" && path != "/.well-known/openid-configuration") ||
		resp.StatusCode != http.StatusOK || t.prm.Load() {
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var meta map[string]json.RawMessage
	var issuer string
	if len(body) > 1<<20 || json.Unmarshal(body, &meta) != nil || json.Unmarshal(meta["issuer"], &issuer) != nil {
		return resp, nil // the SDK says what is wrong with it
	}
	iu, err := url.Parse(issuer)
	if err != nil || impOrigin(iu) != t.origin || strings.TrimSuffix(issuer, "/") == t.origin {
		return resp, nil
	}
	meta["issuer"], _ = json.Marshal(t.origin)
	out, err := json.Marshal(meta)
	if err != nil {
		return resp, nil
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(out)), int64(len(out))
	resp.Header.Del("Content-Length")
	return resp, nil
}
