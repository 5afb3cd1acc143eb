// Package builtin holds wield's built-in tools, one file per area, each
// confined by default:
//
//   - system.go: current_time, sleep, get_env and set_env ([EnvTools]: only
//     variables on an allow list, none by default; set_env needs
//     confirmation)
//   - file.go: read_file, write_file, list_files, delete_file, move_file and
//     get_file_info ([FileTools]: confined to allowed folders with os.Root;
//     delete and move need confirmation)
//   - net.go: http_get, http_post and http_request ([NetTools]: behind the
//     SSRF guard of package httptool)
//   - search.go, search_providers.go: web_search ([WebSearch]: Tavily,
//     Brave, Bing, Google Programmable Search, Bocha, DuckDuckGo)
//   - fetch.go: web_fetch ([WebFetch]: HTML to Markdown, PDF to text)
//   - data.go: json_parse, json_stringify, base64_encode and base64_decode
//   - calc.go: echo and calculator
//   - artifact.go: create_artifact, read_artifact, update_artifact and
//     rewrite_artifact ([ArtifactTools])
//   - subagent.go: call_subagent ([CallSubagent], a routing directive)
//
// Each constructor returns fresh tools with their category, annotations and
// timeout set; nothing is registered by importing the package. [Defaults]
// are the tools safe without any configuration; [All] builds every tool a
// configuration allows.
package builtin

import (
	"fmt"

	"github.com/wieldhq/wield"
)

// Defaults returns the tools that are safe to hand to any model without
// configuration: echo, calculator and current_time.
func Defaults() []*wield.Tool {
	return []*wield.Tool{Echo(), Calculator(), CurrentTime()}
}

// Options configure [All]. The zero value gives every tool that needs no
// configuration, each at its safest.
type Options struct {
	// Files configures the file tools; without AllowedPaths there are none.
	Files FileOptions
	// Env lists the environment variables get_env and set_env may touch.
	Env EnvOptions
	// Net configures http_get, http_post, http_request and web_fetch.
	Net NetOptions
	// Search configures web_search; without a Provider there is none.
	Search SearchOptions
	// Artifacts, when set, is the store of the artifact tools.
	Artifacts wield.ArtifactStore
	// Agents, when set, lists the agents call_subagent may route to; without
	// it there is no call_subagent.
	Agents func() []string
}

// All returns the built-in tools opts allows: the [Defaults], sleep, the
// env, data and network tools and web_fetch always; the file tools with
// allowed paths; web_search with a provider; the artifact tools with a
// store; call_subagent with agents. The error says which configuration is
// wrong (an allowed path that is not a folder, an unknown search provider or
// a missing key).
func All(opts Options) ([]*wield.Tool, error) {
	tools := Defaults()
	tools = append(tools, Sleep())
	tools = append(tools, EnvTools(opts.Env)...)
	tools = append(tools, DataTools()...)
	tools = append(tools, NetTools(opts.Net)...)
	tools = append(tools, WebFetch(opts.Net))
	if len(opts.Files.AllowedPaths) > 0 {
		files, err := FileTools(opts.Files)
		if err != nil {
			return nil, fmt.Errorf("file tools: %w", err)
		}
		tools = append(tools, files...)
	}
	if opts.Search.Provider != "" {
		if opts.Search.Guard == nil {
			opts.Search.Guard = opts.Net.Guard
		}
		search, err := WebSearch(opts.Search)
		if err != nil {
			return nil, fmt.Errorf("web_search: %w", err)
		}
		tools = append(tools, search)
	}
	if opts.Artifacts != nil {
		tools = append(tools, ArtifactTools(opts.Artifacts)...)
	}
	if opts.Agents != nil {
		tools = append(tools, CallSubagent(opts.Agents))
	}
	return tools, nil
}
