package engine

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/wieldhq/wield/internal/jsonenc"
)

// budget cuts an output larger than the tool's budget to its head and tail
// with a notice between them, so the model sees both ends; the record keeps
// the whole output. A failure's message is held to the same budget (a tool
// or a remote server can fail with megabytes of text, which would otherwise
// reach the model, the CLI and the REST body whole); the record keeps the
// message as cut, with "error_truncated" and "original_error_bytes" in the
// metadata. The common case, an output or message within the budget, is a
// length comparison and allocates nothing.
func (e *Engine) budget(k *call) {
	max := e.opts.MaxOutput
	if k.entry != nil && k.entry.Tool.MaxOutput != 0 {
		max = k.entry.Tool.MaxOutput
	}
	if !k.res.OK {
		if max >= 0 && len(k.res.Error) > max {
			n := len(k.res.Error)
			k.res.Error = TruncateText(k.res.Error, max)
			if k.res.Metadata == nil {
				k.res.Metadata = map[string]any{}
			}
			k.res.Metadata["error_truncated"] = true
			k.res.Metadata["original_error_bytes"] = n
		}
		return
	}
	out := k.res.Output
	if max < 0 || len(out) <= max {
		return
	}
	// A model reads the text: escapes of <, > and & that the tool wrote
	// are turned back before it is cut and written as a string.
	text := jsonenc.Unescape(out)
	var s string
	if out[0] == '"' && json.Unmarshal(out, &s) == nil {
		text = []byte(s)
	}
	k.res.Output = Truncate(text, max)
	k.res.FullOutput = out
	if k.res.Metadata == nil {
		k.res.Metadata = map[string]any{}
	}
	k.res.Metadata["truncated"] = true
	k.res.Metadata["original_bytes"] = len(out)
}

// Truncate returns text cut to at most max bytes of JSON string (when max
// leaves room for the notice): the head and the tail, whole UTF-8 characters
// each, with a notice of what was left out between them.
func Truncate(text []byte, max int) json.RawMessage {
	longest := jsonenc.AppendString(nil, notice(len(text), len(text), max))
	keep := max - len(longest)
	if keep < 0 {
		keep = 0
	}
	if keep > len(text) {
		keep = len(text)
	}
	out := cut(text, keep, max)
	if len(out) > max && keep > 0 {
		// Escapes (\n, \", \u0001, ...) make the text longer as JSON than
		// it is: keep the most that fits.
		lo, hi := 0, keep-1
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if len(cut(text, mid, max)) <= max {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		out = cut(text, lo, max)
	}
	return out
}

// TruncateText returns text cut to at most max bytes (when max leaves room
// for the notice): its head and tail, whole UTF-8 characters each, with a
// notice of what was left out between them, as [Truncate] does for an
// output; for plain text, such as an error message.
func TruncateText(text string, max int) string {
	if len(text) <= max {
		return text
	}
	keep := max - len(notice(len(text), len(text), max))
	if keep < 0 {
		keep = 0
	}
	head := keep * 2 / 3
	for head > 0 && !utf8.RuneStart(text[head]) {
		head--
	}
	t := len(text) - (keep - keep*2/3)
	for t < len(text) && !utf8.RuneStart(text[t]) {
		t++
	}
	return text[:head] + notice(t-head, len(text), max) + text[t:]
}

// cut keeps about keep bytes of text, two thirds from its head and the rest
// from its tail; keep must not exceed len(text).
func cut(text []byte, keep, max int) json.RawMessage {
	head := keep * 2 / 3
	tail := keep - head
	for head > 0 && !utf8.RuneStart(text[head]) {
		head--
	}
	t := len(text) - tail
	for t < len(text) && !utf8.RuneStart(text[t]) {
		t++
	}
	return jsonenc.AppendString(nil, string(text[:head])+notice(t-head, len(text), max)+string(text[t:]))
}

func notice(cut, total, max int) string {
	return fmt.Sprintf("\n\n[... %d bytes cut here: the output was %d bytes, over the %d-byte budget ...]\n\n", cut, total, max)
}
