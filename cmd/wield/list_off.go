package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/httpapi"
)

// offGroup is a set of built-in tools that stay off, or refuse every call,
// until one setting turns them on.
type offGroup struct {
	tools   []string
	setting string
	// present says the tools are listed but refuse every call (get_env and
	// set_env without env_allow), rather than missing from the list.
	present bool
}

// sayOff tells, on stderr, which built-in tools the local listing lacks or
// which refuse every call, and the setting that turns each group on: a
// person reading `wield list` learns what exists; stdout, which scripts
// parse, keeps the tools alone. At most three lines; nothing when the list
// was narrowed (a toolset, an agent, a category, tags) or came from a
// server, whose configuration is not this one.
func (a *app) sayOff(tools []*wield.Tool, sel httpapi.ToolSelection) {
	if a.client() != nil || sel.Category != "" || len(sel.Tags) > 0 || sel.Toolset != "" || sel.Agent != "" {
		return
	}
	listed := make(map[string]bool, len(tools))
	for _, t := range tools {
		listed[t.Name] = true
	}
	var envAllow []string
	if a.cfg != nil {
		envAllow = a.cfg.EnvAllow
	}
	groups := a.offGroups(envAllow)
	// The file tools on a line, the other missing tools on one, the
	// refusing ones on one.
	var lines [3][]string
	for i, g := range groups {
		on := slices.ContainsFunc(g.tools, func(n string) bool { return listed[n] })
		switch {
		case g.present && on:
			lines[2] = append(lines[2], fmt.Sprintf("refuse every variable: %s (%s)", strings.Join(g.tools, ", "), g.setting))
		case !g.present && !on:
			lines[min(i, 1)] = append(lines[min(i, 1)], fmt.Sprintf("%s (%s)", strings.Join(g.tools, ", "), g.setting))
		}
	}
	for i, l := range lines {
		switch {
		case len(l) == 0:
		case i < 2:
			fmt.Fprintln(a.stderr, "off: "+strings.Join(l, "; "))
		default:
			fmt.Fprintln(a.stderr, l[0])
		}
	}
}

// offGroups are the built-in tools a setting turns on, with the setting.
// run_program's is the flag when --programs=off turned off what wield.yaml
// may enable.
func (a *app) offGroups(envAllow []string) []offGroup {
	programs := "pass --programs, or set programs: {enabled: true} in wield.yaml"
	if a.programs == "off" {
		programs = "--programs=off turns it off"
	}
	return []offGroup{
		{tools: []string{"read_file", "write_file", "list_files", "delete_file", "move_file", "get_file_info"}, setting: "set allowed_paths in wield.yaml"},
		{tools: []string{"web_search"}, setting: "set web_search: {provider, api_key} in wield.yaml"},
		{tools: []string{"call_subagent"}, setting: "load a tool file of kind: agent with --tools"},
		{tools: []string{"run_program"}, setting: programs},
		{tools: []string{"get_env", "set_env"}, setting: "set env_allow in wield.yaml", present: len(envAllow) == 0},
	}
}

// offSetting is toolfile.Loader.Off: for a built-in tool that is missing
// until a setting turns it on, that setting; "" for any other name. The
// loader asks only about names nothing defines, so a tool that is on is
// never said to be off.
func (a *app) offSetting(name string) string {
	for _, g := range a.offGroups(nil) {
		if !g.present && slices.Contains(g.tools, name) {
			return g.setting
		}
	}
	return ""
}
