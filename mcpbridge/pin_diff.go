package mcpbridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/wieldhq/wield/internal/safetext"
)

// pinDiffContext is the number of unchanged lines shown around a change.
const pinDiffContext = 3

// maxPinDiff bounds the text of one held tool's diff; past it the diff is
// cut at a line's end with a note of how much was left out.
const maxPinDiff = 64 << 10

// pinDiff shows the changed parts of a definition, pinned against current
// (canonical JSON of [PinTool]'s parts, either nil when not kept), as
// unified line diffs: each part pretty-printed, the description as its
// text. Every line is made safe with safetext: a server's description must
// not move a terminal's cursor or reverse the text an operator reads
// before accepting it.
func pinDiff(pinned, current json.RawMessage, changed []string) string {
	var pp, cp map[string]json.RawMessage
	_ = json.Unmarshal(pinned, &pp) // nil or canonical JSON: an error leaves the map nil
	_ = json.Unmarshal(current, &cp)
	var b strings.Builder
	for _, part := range changed {
		switch {
		case pp == nil:
			fmt.Fprintf(&b, "%s: changed; the pinned definition was not kept (pinned by an older wield, or over %d KiB), so only the change is known\n", part, MaxPinDefinition>>10)
			if cp != nil {
				pinWriteSide(&b, '+', pinPretty(part, cp[part]))
			}
		case cp == nil:
			fmt.Fprintf(&b, "%s: changed; the current definition is over %d KiB and is not shown\n", part, MaxPinDefinition>>10)
		default:
			fmt.Fprintf(&b, "--- pinned %s\n+++ now %s\n", part, part)
			pinUnified(&b, pinPretty(part, pp[part]), pinPretty(part, cp[part]))
		}
	}
	return pinClip(b.String(), maxPinDiff)
}

// pinClip cuts a diff over max bytes at the end of a line, saying so.
func pinClip(d string, max int) string {
	if len(d) <= max {
		return d
	}
	cut := strings.LastIndexByte(d[:max], '\n') + 1
	return d[:cut] + fmt.Sprintf("… %d more bytes of diff not shown (over %d KiB)\n", len(d)-cut, max>>10)
}

// pinPretty is one part as lines a person reads: the description as its
// text, other parts as indented JSON.
func pinPretty(part string, raw json.RawMessage) []string {
	if len(raw) == 0 {
		return []string{"(none)"}
	}
	if part == "description" {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strings.Split(s, "\n")
		}
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return []string{string(raw)}
	}
	return strings.Split(buf.String(), "\n")
}

func pinWriteSide(b *strings.Builder, op byte, lines []string) {
	for _, l := range lines {
		b.WriteByte(op)
		b.WriteString(safetext.Line(l))
		b.WriteByte('\n')
	}
}

// pinLine is one line of a diff: ' ', '-' or '+', and its text.
type pinLine struct {
	op   byte
	text string
}

// pinUnified writes the line diff of a and b in hunks with
// pinDiffContext lines of context, headed "@@ -from,n +from,n @@".
func pinUnified(b *strings.Builder, a, c []string) {
	lines := pinLineDiff(a, c)
	for i := 0; i < len(lines); {
		if lines[i].op == ' ' {
			i++
			continue
		}
		// A hunk: context before, changes and the context between changes
		// closer than twice the context, context after.
		start := max(0, i-pinDiffContext)
		end := i
		for end < len(lines) {
			if lines[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(lines) && lines[run].op == ' ' {
				run++
			}
			if run == len(lines) || run-end > 2*pinDiffContext {
				end = min(end+pinDiffContext, len(lines))
				break
			}
			end = run
		}
		fromA, fromC := 1, 1
		for _, l := range lines[:start] {
			if l.op != '+' {
				fromA++
			}
			if l.op != '-' {
				fromC++
			}
		}
		var nA, nC int
		for _, l := range lines[start:end] {
			if l.op != '+' {
				nA++
			}
			if l.op != '-' {
				nC++
			}
		}
		fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@\n", fromA, nA, fromC, nC)
		for _, l := range lines[start:end] {
			b.WriteByte(l.op)
			b.WriteString(safetext.Line(l.text))
			b.WriteByte('\n')
		}
		i = end
	}
}

// pinLineDiff compares two texts line by line with diff-match-patch's line
// mode.
func pinLineDiff(a, c []string) []pinLine {
	dmp := diffmatchpatch.New()
	ta, tc := strings.Join(a, "\n")+"\n", strings.Join(c, "\n")+"\n"
	ca, cc, table := dmp.DiffLinesToChars(ta, tc)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cc, false), table)
	var out []pinLine
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l == "" {
				continue
			}
			out = append(out, pinLine{op, strings.TrimSuffix(l, "\n")})
		}
	}
	return out
}
