package toolfile

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// shortEntry holds the tool-file keys that say how a tool runs without an
// entry block, as the tool-system format writes a native tool and an MCP
// tool (docs/tool-files.md, "Short entries"):
//
//	api_url: https://api.example.com/search   # an http entry: POST, arguments as JSON
//	auth_method: api_key                      # api_key, bearer, basic or none
//	api_key_env: SEARCH_API_KEY               # where the key is; default NAME_API_KEY
//
//	mcp_server_url: http://127.0.0.1:3001/mcp # an mcp entry on the configured server of that URL
type shortEntry struct {
	apiURL, authMethod, apiKeyEnv, mcpURL, mcpKey *field
}

// take keeps f when it is one of the short keys.
func (s *shortEntry) take(f field) bool {
	var at **field
	switch f.name {
	case "api_url":
		at = &s.apiURL
	case "auth_method":
		at = &s.authMethod
	case "api_key_env":
		at = &s.apiKeyEnv
	case "mcp_server_url":
		at = &s.mcpURL
	case "mcp_api_key":
		at = &s.mcpKey
	default:
		return false
	}
	*at = &f
	return true
}

// said reports whether any short key is written.
func (s *shortEntry) said() bool { return s.first() != nil }

// first is the key node of the first short key written, for messages.
func (s *shortEntry) first() *yaml.Node {
	for _, f := range []*field{s.apiURL, s.mcpURL, s.authMethod, s.apiKeyEnv, s.mcpKey} {
		if f != nil {
			return f.key
		}
	}
	return nil
}

// authMethods maps the ways the format writes an auth_method ("API Key",
// "api-key", "Bearer") to the http entry's auth types; "" is none.
var authMethods = map[string]string{
	"api_key": "api_key", "apikey": "api_key", "key": "api_key",
	"bearer": "bearer", "bearer_token": "bearer", "token": "bearer", "oauth2": "bearer",
	"basic": "basic",
	"none":  "", "": "",
}

// shortEntry turns the short keys into the entry they mean: api_url into
// an http entry, mcp_server_url into an mcp entry.
func (d *decoder) shortEntry(s shortEntry, def *Def) Entry {
	at := s.first()
	line, col := pos(at)
	e := Entry{Line: line, Col: col}
	switch {
	case s.apiURL != nil && s.mcpURL != nil:
		d.errorf(s.mcpURL.key, "api_url and mcp_server_url both say how the tool runs: keep one")
		return e
	case s.apiURL != nil:
		if s.mcpKey != nil {
			d.errorf(s.mcpKey.key, "mcp_api_key applies to mcp_server_url, not to api_url: use auth_method and api_key_env")
		}
		return d.apiEntry(s, def, e)
	case s.mcpURL != nil:
		for _, f := range []*field{s.authMethod, s.apiKeyEnv} {
			if f != nil {
				d.errorf(f.key, "%s applies to api_url, not to mcp_server_url: the server's headers in mcp_servers authenticate", f.name)
			}
		}
		return d.mcpEntry(s, def, e)
	}
	d.errorf(at, "%s without api_url or mcp_server_url: the tool has no entry", at.Value)
	return e
}

// apiEntry is api_url's http entry: a POST of the arguments as a JSON
// object, with the key of auth_method read from the environment at each
// call (api_key_env, else NAME_API_KEY; for basic NAME_USER and
// NAME_PASSWORD).
func (d *decoder) apiEntry(s shortEntry, def *Def, e Entry) Entry {
	e.Type = "http"
	e.Values = map[string]any{"method": "POST", "url": d.str(*s.apiURL)}
	method := ""
	if s.authMethod != nil {
		raw := d.str(*s.authMethod)
		m, ok := authMethods[strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(raw)))]
		if !ok {
			d.errorf(s.authMethod.val, "auth_method: %q is not api_key, bearer, basic or none", raw)
			return e
		}
		method = m
	}
	envName := envPrefix(def.Name)
	env := envName + "_API_KEY"
	if s.apiKeyEnv != nil {
		env = d.str(*s.apiKeyEnv)
		if method == "" {
			d.errorf(s.apiKeyEnv.key, "api_key_env without auth_method: say how the key is sent (api_key, bearer or basic)")
		}
	}
	switch method {
	case "api_key", "bearer":
		e.Values["auth"] = map[string]any{"type": method, "env": env}
	case "basic":
		if s.apiKeyEnv == nil {
			env = envName + "_USER:" + envName + "_PASSWORD"
		}
		e.Values["auth"] = map[string]any{"type": method, "env": env}
	}
	if d.kinds["http"] == nil {
		d.warnf(s.apiURL.key, "api_url: entry type http is not given to this loader (Loader.Kinds): %s", noHandler)
	}
	return e
}

// mcpEntry is mcp_server_url's mcp entry: the tool of the same name on the
// configured MCP server whose URL this is.
func (d *decoder) mcpEntry(s shortEntry, def *Def, e Entry) Entry {
	e.Type = "mcp"
	url := d.str(*s.mcpURL)
	name, ok := d.mcpURLs[strings.TrimSuffix(url, "/")]
	if !ok {
		name, ok = d.mcpURLs[url]
	}
	if !ok {
		d.errorf(s.mcpURL.val, "mcp_server_url: no MCP server with the URL %q is configured: add it to mcp_servers (or tools.mcpServers) in the configuration, with its headers", url)
		e.Type = "" // no kind to run: the problem above says why
		return e
	}
	if s.mcpKey != nil {
		d.warnf(s.mcpKey.key, "mcp_api_key is not used: the headers of MCP server %q in the configuration authenticate", name)
	}
	e.Values = map[string]any{"server": name, "tool": def.Name}
	if d.kinds["mcp"] == nil {
		d.warnf(s.mcpURL.key, "mcp_server_url: entry type mcp is not given to this loader (Loader.Kinds): %s", noHandler)
	}
	return e
}

// envPrefix is a tool's name as an environment variable's prefix:
// search-tool becomes SEARCH_TOOL.
func envPrefix(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}
