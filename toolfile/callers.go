package toolfile

import "github.com/wieldhq/wield"

// allowedCallers reads `allowed_callers: [direct, program]`: who may call
// the tool (see [wield.Tool.AllowsCaller]). Each value is direct or
// program; an empty list would admit no one, which is refused too.
func (d *decoder) allowedCallers(f field) []string {
	list, ok := seq(f.val)
	if !ok {
		d.errorf(f.val, "allowed_callers: expected a list of direct and program, got %s", kindName(f.val))
		return nil
	}
	if len(list) == 0 {
		d.errorf(f.val, "allowed_callers: an empty list admits no caller; list direct, program or both")
		return nil
	}
	var out []string
	for _, v := range list {
		s := d.str(field{name: f.name, val: v})
		switch s {
		case wield.AllowDirect, wield.AllowProgram:
			out = append(out, s)
		default:
			d.errorf(v, "allowed_callers: %q is not direct or program", s)
		}
	}
	return out
}
