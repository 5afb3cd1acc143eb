package toolfile

import (
	"fmt"
	"strings"
)

// Problem is one mistake in a file, located by line and column (1-based).
// A warning does not stop the tool from loading (a builtin handler that is
// not provided, a required parameter with a default); any other problem
// leaves its document out.
type Problem struct {
	File      string
	Line, Col int
	Message   string
	Warning   bool
}

// String formats the problem as "file:line:col: message", the form editors
// and CI logs link to.
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message)
}

// Problems is the error returned by loading when some documents could not
// be loaded; each element locates one mistake.
type Problems []Problem

// Error lists the problems one per line.
func (ps Problems) Error() string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// errors reports whether any problem is more than a warning.
func (ps Problems) errors() bool {
	for _, p := range ps {
		if !p.Warning {
			return true
		}
	}
	return false
}
