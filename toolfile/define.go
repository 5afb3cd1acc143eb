package toolfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wieldhq/wield"
)

// UndefinedError is the error of [Set.Apply], [Toolset.Define] and
// [Agent.CreateToolkit] when a toolset or an agent names a tool or a toolset
// that the registry does not hold: one problem at each such name, located
// where the file writes it, worded as the load's own warning about it. It
// wraps [wield.ErrNotFound].
type UndefinedError struct {
	Problems Problems
}

// Error lists the problems one per line, as [Problems.Error] does.
func (e *UndefinedError) Error() string { return e.Problems.Error() }

// Unwrap returns [wield.ErrNotFound].
func (e *UndefinedError) Unwrap() error { return wield.ErrNotFound }

// Define defines the toolset in reg. A tool that reg does not hold is an
// [*UndefinedError] at its name.
func (ts *Toolset) Define(reg *wield.Registry) error {
	err := reg.DefineToolset(ts.Toolset)
	if err == nil {
		return nil
	}
	return undefined(reg, err, ts.File, ts.Line, ts.Col, ts.refs, "toolset %q", ts.Name)
}

// CreateToolkit creates the agent's toolkit in reg (see [Agent.Toolkit]). A
// tool or a toolset that reg does not hold is an [*UndefinedError] at its
// name.
func (a *Agent) CreateToolkit(reg *wield.Registry) error {
	_, err := reg.CreateToolkit(a.Name, a.Toolkit()...)
	if err == nil {
		return nil
	}
	return undefined(reg, err, a.File, a.Line, a.Col, a.refs, "agent %q", a.Name)
}

// undefined locates err, the registry's refusal of what the file at
// line:col defines (what), at each of refs that reg does not hold. An
// error of another cause, or one no ref explains, is located at line:col.
func undefined(reg *wield.Registry, err error, file string, line, col int, refs []ref, what, name string) error {
	whatName := fmt.Sprintf(what, name)
	var ps Problems
	for _, r := range refs {
		if r.toolset {
			if _, ok := reg.Toolset(r.name); !ok {
				ps = append(ps, Problem{File: file, Line: r.line, Col: r.col, Message: fmt.Sprintf("%s: toolset %q is not defined", whatName, r.name)})
			}
			continue
		}
		if _, ok := reg.Tool(r.name); !ok {
			ps = append(ps, Problem{File: file, Line: r.line, Col: r.col, Message: fmt.Sprintf("%s: tool %q is not defined", whatName, r.name)})
		}
	}
	if len(ps) > 0 {
		return &UndefinedError{Problems: ps}
	}
	// Not a name the file writes (a toolset it names lost a tool since
	// it was defined): the registry's words, without its package's
	// prefix, at the definition.
	if errors.Is(err, wield.ErrNotFound) {
		msg := strings.ReplaceAll(err.Error(), wield.ErrNotFound.Error(), "not found")
		return &UndefinedError{Problems: Problems{{File: file, Line: line, Col: col, Message: msg}}}
	}
	return fmt.Errorf("%s:%d:%d: %s: %w", file, line, col, whatName, err)
}
