package main

import (
	"bytes"
	"io"
	"text/tabwriter"
)

// table is how wield prints a table: columns aligned by a tabwriter, and
// no line ending in spaces (the tabwriter pads a cell before an empty last
// one, or a last cell ended by a tab, to its column's width).
type table struct {
	*tabwriter.Writer
	out *trimmedLines
}

func newTable(w io.Writer) *table {
	out := &trimmedLines{w: w}
	return &table{Writer: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0), out: out}
}

// Flush writes the table.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	return t.out.flush()
}

// trimmedLines writes to w the lines written to it without their trailing
// spaces, once each is whole.
type trimmedLines struct {
	w    io.Writer
	part []byte // the line begun, not ended yet
}

func (t *trimmedLines) Write(p []byte) (int, error) {
	t.part = append(t.part, p...)
	end := bytes.LastIndexByte(t.part, '\n')
	if end < 0 {
		return len(p), nil
	}
	out := make([]byte, 0, end+1)
	for line := range bytes.Lines(t.part[:end+1]) {
		out = append(append(out, bytes.TrimRight(line[:len(line)-1], " ")...), '\n')
	}
	t.part = append(t.part[:0], t.part[end+1:]...)
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes a last line that has no newline.
func (t *trimmedLines) flush() error {
	if len(t.part) == 0 {
		return nil
	}
	_, err := t.w.Write(bytes.TrimRight(t.part, " "))
	t.part = t.part[:0]
	return err
}
