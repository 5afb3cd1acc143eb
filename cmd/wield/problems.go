package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wieldhq/wield/internal/safetext"
	"github.com/wieldhq/wield/toolfile"
)

// writeProblems writes problems in files the one way every command tells
// them ('wield validate' on stdout; list, call, serve and the others on
// stderr, as they load): sorted by file, line and column (see
// [toolfile.Problems.Sort]), one a line as "file:line:col: message", a
// warning's message after "warning: ", escaped so that a file cannot write
// to the terminal. The notes (a file re-declaring a built-in) follow as
// "info: ". It returns how many errors and warnings it wrote.
func writeProblems(w io.Writer, problems, notes []toolfile.Problem) (errs, warnings int) {
	ps := slices.Clone(problems)
	toolfile.Problems(ps).Sort()
	for _, p := range ps {
		kind := ""
		if p.Warning {
			kind = "warning: "
			warnings++
		} else {
			errs++
		}
		fmt.Fprintf(w, "%s:%d:%d: %s%s\n", safetext.Line(p.File), p.Line, p.Col, kind, safetext.Line(p.Message))
	}
	ns := slices.Clone(notes)
	toolfile.Problems(ns).Sort()
	for _, p := range ns {
		fmt.Fprintf(w, "%s:%d:%d: info: %s\n", safetext.Line(p.File), p.Line, p.Col, safetext.Line(p.Message))
	}
	return errs, warnings
}

// loadError is the error of tool files that did not load, as a command
// stops with it: what the command was doing, then the problems as
// writeProblems tells them (sorted, escaped: the error is printed on a
// terminal, and a file's name is anybody's). Other errors follow as they
// are.
type loadError struct {
	doing string
	err   error
}

func (e loadError) Error() string {
	var ps toolfile.Problems
	if !errors.As(e.err, &ps) {
		return e.doing + ":\n" + e.err.Error()
	}
	var b strings.Builder
	b.WriteString(e.doing + ":\n")
	writeProblems(&b, ps, nil)
	return strings.TrimSuffix(b.String(), "\n")
}

func (e loadError) Unwrap() error { return e.err }
