package main

import (
	"fmt"
	"io"
	"slices"

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
