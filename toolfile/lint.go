package toolfile

import (
	"cmp"
	"context"
	"slices"
)

// Lint checks tool, toolset and agent files (or folders of them) and returns
// every problem, warnings included, sorted by file, line and column. A zero
// [Loader] does not know the builtins, so it cannot report missing ones; use
// [Loader.Lint] for that.
func Lint(paths ...string) []Problem {
	var l Loader
	return l.Lint(paths...)
}

// Lint is [Lint] with the loader's builtins and kinds.
func (l *Loader) Lint(paths ...string) []Problem {
	set, _ := l.LoadDirs(context.Background(), paths...)
	return set.Problems
}

// Sort orders the problems by file, line and column, keeping the order in
// which they were found among those of one place: the one order in which
// loading, [Lint], and every command that prints problems give them.
func (ps Problems) Sort() { sortProblems(ps) }

func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}
