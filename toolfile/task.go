package toolfile

import "github.com/wieldhq/wield"

// task reads the `task:` key of a tool: "optional" or "required" make the
// tool's calls MCP tasks for clients that speak them; "never" (or no key)
// keeps them plain calls. Anything else is a problem at the value's line.
func (d *decoder) task(f field) wield.TaskSupport {
	switch v := d.str(f); v {
	case "never", "":
		return ""
	case string(wield.TaskOptional), string(wield.TaskRequired):
		return wield.TaskSupport(v)
	default:
		d.errorf(f.val, "task: %q is not optional, required or never", v)
		return ""
	}
}
