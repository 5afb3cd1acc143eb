package llm

import "strings"

// Reasoning is never a source of calls.
//
// Reasoning models think aloud before they answer, and their thinking often
// drafts the call they are about to make, or one they decided against
// ("I could delete / with delete_file… no"). A call written there is not a
// request: only the answer's calls are. The markers the formats [Parse]
// reads use:
//
//   - <think>…</think> (Qwen3, DeepSeek-R1, GLM, MiniMax; <seed:think> in
//     Seed-OSS, as any namespace prefix is dropped), <thinking>…</thinking>
//     and <reasoning>…</reasoning> (prompted Claude-style and others);
//   - [THINK]…[/THINK] (Mistral's Magistral);
//   - <|START_THINKING|>…<|END_THINKING|> (Cohere Command),
//     <|begin_of_thought|>…<|end_of_thought|>;
//   - gpt-oss's harmony analysis channel, <|channel|>analysis<|message|>…
//     up to <|end|> (or the next <|start|>, <|channel|>, <|call|>, <|return|>).
//
// A block is skipped whole. A closing marker with no opening one ends
// reasoning that began with the text (Qwen3 and DeepSeek-R1 chat templates
// put the opening <think> in the prompt, so the reply holds only the
// closing one): whatever came before it is dropped. A block that is never
// closed runs to the end of the text, and a call inside it is reported as
// lost (the reply ended while the model was still thinking, or it forgot to
// close the block; either way it should write the call again, outside). A
// marker inside `code` in prose is prose, as for every format.

// parseReasoningTags are the element names of reasoning blocks.
var parseReasoningTags = []string{"think", "thinking", "reasoning"}

// parseReasoningTokens pairs the special-token markers of reasoning blocks,
// lowered.
var parseReasoningTokens = [][2]string{
	{"<|start_thinking|>", "<|end_thinking|>"},
	{"<|begin_of_thought|>", "<|end_of_thought|>"},
	{"[think]", "[/think]"},
}

// parseHarmonyEnds end a harmony message when <|end|> is missing.
var parseHarmonyEnds = []string{"<|start|>", "<|channel|>", "<|call|>", "<|return|>"}

// scanReasoning handles a reasoning marker at j and returns where the scan
// goes on; ok is false when there is no marker at j.
func (p *parseState) scanReasoning(j, to int) (int, bool) {
	lower := p.lower[:to]
	switch lower[j] {
	case '<':
		if strings.HasPrefix(lower[j:], "<|channel|>") {
			return p.scanHarmony(j, to)
		}
		if strings.HasPrefix(lower[j:], "<|") {
			break
		}
		tag, ok := parseTagAt(p.text, p.lower, j, to)
		if !ok || tag.selfClosing || !parseIn(tag.name, parseReasoningTags) {
			return 0, false
		}
		if tag.closing {
			p.dropReasoning()
			return tag.end, true
		}
		for i := tag.end; i < to; {
			c := strings.Index(lower[i:], "</")
			if c < 0 {
				break
			}
			c += i
			if t, ok := parseTagAt(p.text, p.lower, c, to); ok && t.closing && t.name == tag.name {
				return t.end, true
			}
			i = c + 2
		}
		p.unclosedReasoning("<"+tag.rawName+">", tag.end, to)
		return to, true
	case '[':
	default:
		return 0, false
	}
	for _, m := range parseReasoningTokens {
		if strings.HasPrefix(lower[j:], m[1]) {
			p.dropReasoning()
			return j + len(m[1]), true
		}
		if strings.HasPrefix(lower[j:], m[0]) {
			from := j + len(m[0])
			if e := strings.Index(lower[from:], m[1]); e >= 0 {
				return from + e + len(m[1]), true
			}
			p.unclosedReasoning(p.text[j:from], from, to)
			return to, true
		}
	}
	return 0, false
}

// scanHarmony reads a harmony <|channel|> header at j: the analysis channel
// is reasoning; the others are not handled here.
func (p *parseState) scanHarmony(j, to int) (int, bool) {
	lower := p.lower[:to]
	from := j + len("<|channel|>")
	if !strings.HasPrefix(lower[from:], "analysis") {
		return 0, false
	}
	from += len("analysis")
	for i := from; i < to; {
		k := strings.Index(lower[i:], "<|")
		if k < 0 {
			break
		}
		k += i
		if strings.HasPrefix(lower[k:], "<|end|>") {
			return k + len("<|end|>"), true
		}
		for _, m := range parseHarmonyEnds {
			if strings.HasPrefix(lower[k:], m) {
				return k, true
			}
		}
		i = k + 2
	}
	p.unclosedReasoning("<|channel|>analysis", from, to)
	return to, true
}

// dropReasoning handles a closing marker with no opening one: the text
// before it was reasoning, so the calls and losses found in it are
// forgotten. Inside a code fence it is only text.
func (p *parseState) dropReasoning() {
	if p.fence > 0 {
		return
	}
	p.calls, p.lost, p.seen = p.calls[:p.base], p.lost[:p.baseLost], p.baseSeen
}

// unclosedReasoning reports each call in text[from:to], reasoning that
// opened with marker and never closed: not read as a call, but not dropped
// without a word either.
func (p *parseState) unclosedReasoning(marker string, from, to int) {
	if p.depth >= 4 {
		return
	}
	sub := &parseState{
		text: p.text, lower: p.lower, schema: p.schema,
		kinds: p.kinds, rules: p.rules, calls: []ParsedCall{}, depth: p.depth + 1,
	}
	sub.scan(from, to)
	why := "is inside " + marker + ", reasoning that is never closed, so it is not a call to make"
	for _, c := range sub.calls {
		p.loseCall(c.Name, why)
	}
	for range sub.lost {
		p.loseCall("", why)
	}
}
