package llm

// messageOverhead is what a message costs a request beyond its text: its
// role and the provider's framing, so that many empty messages still
// count.
const messageOverhead = 16

// HistorySize is about how many bytes m adds to a request: its text, its
// calls' names, arguments and IDs, its result's output or error. A
// provider's tokens are roughly a quarter of it for English text and
// JSON.
func HistorySize(m Message) int {
	n := messageOverhead + len(m.Content) + len(m.ToolCallID) + len(m.ToolName)
	for _, c := range m.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments) + len(c.Signature)
	}
	if r := m.Result; r != nil {
		n += len(r.Output) + len(r.Error)
		for _, v := range r.ValidationErrors {
			n += len(v.Path) + len(v.Message)
		}
	}
	return n
}

// TrimHistory bounds a conversation to about maxBytes (see [HistorySize])
// by leaving out its oldest turns, so that a long conversation neither
// grows without end nor outgrows the model's context window. It returns
// what to send, and how many messages it left out.
//
// The leading system messages are always kept. The rest is cut only just
// before a user message, and never between a call and its result: what is
// kept starts with a user message (as Anthropic and Gemini require) and
// holds every call's result and every result's call, which each provider
// requires of a conversation (Anthropic and OpenAI refuse a tool_use or
// tool_call without its result, and a result without its call). So the
// bound gives way to the latest turn: when the system messages and the
// last user message with all that follows it are over maxBytes, they are
// what is sent, and when there is no place to cut at all, msgs is returned
// whole. maxBytes of zero or less is no bound.
//
// msgs is not changed; a trimmed conversation is a new slice, so the
// messages left out are not kept alive by it.
func TrimHistory(msgs []Message, maxBytes int) ([]Message, int) {
	if maxBytes <= 0 {
		return msgs, 0
	}
	head := 0
	for head < len(msgs) && msgs[head].Role == RoleSystem {
		head++
	}
	// suffix[i] is the size of msgs[i:].
	suffix := make([]int, len(msgs)+1)
	for i := len(msgs) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + HistorySize(msgs[i])
	}
	if suffix[0] <= maxBytes {
		return msgs, 0
	}
	headSize := suffix[0] - suffix[head]
	// split[i] > 0 when a cut just before msgs[i] would part a call from
	// its result: the call is before i, its result at i or after.
	split := make([]int, len(msgs)+1)
	called := map[string]int{}
	for i := head; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == RoleTool {
			if c, ok := called[m.ToolCallID]; ok {
				split[c+1]++
				split[i+1]--
			}
		}
		for _, tc := range m.ToolCalls {
			called[tc.ID] = i
		}
	}
	cut, open := -1, 0
	for i := head; i < len(msgs); i++ {
		open += split[i]
		if i == head || open > 0 || msgs[i].Role != RoleUser {
			continue
		}
		cut = i
		if headSize+suffix[i] <= maxBytes {
			break
		}
	}
	if cut < 0 {
		return msgs, 0
	}
	out := make([]Message, 0, head+len(msgs)-cut)
	out = append(out, msgs[:head]...)
	out = append(out, msgs[cut:]...)
	return out, cut - head
}
