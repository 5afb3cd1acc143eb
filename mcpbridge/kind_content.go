package mcpbridge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/schemadec"
	"github.com/wieldhq/wield/toolfile"
)

// The tool-file entry types of this package. Both return fixed content
// whose texts are Go templates ({{.name}} is the argument "name"); an
// mcp_client entry first runs steps that talk to the MCP client:
//
//	entry:
//	  type: content
//	  content:
//	    - {type: text, text: "Hello {{.name}}"}
//	    - {type: image, file: logo.png, mime_type: image/png}   # or data_base64
//	    - {type: resource, uri: "note://{{.name}}", mime_type: text/plain, text: "..."}
//
//	entry:
//	  type: mcp_client
//	  steps:
//	    - log: {level: info, message: "starting {{.name}}"}
//	    - progress: {progress: 50, total: 100, message: half way}
//	    - sleep: 50ms
//	    - sample: {prompt: "{{.question}}", max_tokens: 100, as: reply}
//	    - elicit: {message: "Who are you?", schema: {type: object, properties: {...}}, as: answer}
//	    - roots: {as: dirs}                               # the client's roots
//	    - ask:                                            # several questions in one round
//	        - elicit: {message: "Your name?", schema: {...}, as: name}
//	        - sample: {prompt: "A greeting", as: greeting}
//	        - roots: {as: where}
//	    - fail: "no luck with {{.name}}"                  # the call fails with this text
//	  text: "The model said {{.reply.text}}; you said {{json .answer.content}}"
//
// text is a shorthand for one text item of content. A sample step's result
// has text, role, model and stop_reason; an elicit step's has action
// (accept, decline or cancel) and content; a roots step's has roots (a
// list of uri and name). An ask step's questions (elicit, sample and roots
// steps) go to the client together: a client of 2026-07-28 gets them in
// one input_required result; a session's client is asked them in turn.
// Consecutive elicit steps are asked in rounds, one each, as written: a
// later question may depend on an earlier answer. A sample, elicit or
// roots step (an ask step's too) asks under its as: name, unless key:
// names another. Log steps are skipped, and
// progress is not reported, when the call did not come over MCP; sample
// and elicit steps then fail the call, as they do when the client cannot
// answer them.

// ContentKind is the tool-file entry type "content" (register it as
// Loader.Kinds["content"]): a tool that returns fixed, templated MCP
// content. Problems of the entry are errors of the definition.
func ContentKind() toolfile.Kind {
	return toolfile.KindFunc(func(_ context.Context, def *toolfile.Def) (wield.Handler, error) {
		return kindBuild(def, false)
	})
}

// ClientKind is the tool-file entry type "mcp_client" (register it as
// Loader.Kinds["mcp_client"]): a tool that logs, reports progress, asks
// the client's model or user, then returns templated content.
func ClientKind() toolfile.Kind {
	return toolfile.KindFunc(func(_ context.Context, def *toolfile.Def) (wield.Handler, error) {
		return kindBuild(def, true)
	})
}

type kindContentSpec struct {
	Type       string `json:"type"`
	Text       string `json:"text"`
	DataBase64 string `json:"data_base64"`
	File       string `json:"file"`
	MIMEType   string `json:"mime_type"`
	URI        string `json:"uri"`
	Name       string `json:"name"`
}

type kindStepSpec struct {
	Log *struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	} `json:"log"`
	Progress *struct {
		Progress float64 `json:"progress"`
		Total    float64 `json:"total"`
		Message  string  `json:"message"`
	} `json:"progress"`
	Sleep  string `json:"sleep"`
	Sample *struct {
		Prompt   string `json:"prompt"`
		Messages []struct {
			Role string `json:"role"`
			Text string `json:"text"`
		} `json:"messages"`
		MaxTokens int64  `json:"max_tokens"`
		As        string `json:"as"`
		Key       string `json:"key"`
	} `json:"sample"`
	Roots *struct {
		As  string `json:"as"`
		Key string `json:"key"`
	} `json:"roots"`
	Ask []kindStepSpec `json:"ask"`
	// BeforeTask, on a first step that asks, has a task tool ask its
	// questions before its task is made (see firstQuestions).
	BeforeTask bool `json:"before_task"`
	Elicit     *struct {
		Message string          `json:"message"`
		Schema  json.RawMessage `json:"schema"`
		As      string          `json:"as"`
		Key     string          `json:"key"`
	} `json:"elicit"`
	Fail string `json:"fail"`
}

type kindSpec struct {
	Steps   []kindStepSpec    `json:"steps"`
	Content []kindContentSpec `json:"content"`
	Text    string            `json:"text"`
}

// kindStep is one decoded step; exactly one of its actions is set.
type kindStep struct {
	level      LogLevel
	log        *tplText
	progress   *[2]float64
	progressM  tplText
	sleep      time.Duration
	sample     []kindSampleMsg
	maxTokens  int64
	elicit     *tplText
	elicitWith *jsonschema.Schema
	fail       *tplText
	roots      bool
	ask        []kindStep // an ask step's questions
	beforeTask bool
	as         string
	inputKey   string // the key of a sample or elicit step's question in inputRequests (WithInputKey)
}

// kindSampleMsg is a message of a sample step, its text rendered per call.
type kindSampleMsg struct {
	role string
	text tplText
}

// kindHandler runs an entry of either type.
type kindHandler struct {
	steps   []kindStep
	content []tplContent
}

var kindLevels = []LogLevel{LevelDebug, LevelInfo, LevelNotice, LevelWarning, LevelError, LevelCritical, LevelAlert, LevelEmergency}

func kindBuild(def *toolfile.Def, client bool) (wield.Handler, error) {
	what := "content entry"
	if client {
		what = "mcp_client entry"
	}
	raw, err := json.Marshal(def.Entry.Values)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var spec kindSpec
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !client && len(spec.Steps) > 0 {
		return nil, fmt.Errorf("%s: steps belong to an mcp_client entry", what)
	}
	h := &kindHandler{}
	params := map[string]bool{}
	for _, p := range def.Parameters {
		params[p.Name] = true
	}
	for i, st := range spec.Steps {
		ks, err := kindStepOf(st, fmt.Sprintf("step %d", i+1))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if ks.beforeTask && i > 0 {
			return nil, fmt.Errorf("%s: step %d: before_task belongs to the first step only (nothing may run before its questions)", what, i+1)
		}
		for _, one := range append([]kindStep{ks}, ks.ask...) {
			if one.as != "" && params[one.as] {
				return nil, fmt.Errorf("%s: step %d: as %q is also a parameter's name", what, i+1, one.as)
			}
		}
		h.steps = append(h.steps, ks)
	}
	specs := spec.Content
	if spec.Text != "" {
		specs = append([]kindContentSpec{{Type: ContentText, Text: spec.Text}}, specs...)
	}
	fails := slices.ContainsFunc(h.steps, func(st kindStep) bool { return st.fail != nil })
	if len(specs) == 0 && !fails {
		return nil, fmt.Errorf("%s: needs content or text", what)
	}
	for i, cs := range specs {
		c, err := kindContentOf(cs, filepath.Dir(def.File))
		if err != nil {
			return nil, fmt.Errorf("%s: content %d: %w", what, i+1, err)
		}
		tc, err := newTplContent(fmt.Sprintf("content %d", i+1), c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		h.content = append(h.content, tc)
	}
	return h, nil
}

// kindContentOf reads a content item, its data from base64 or a file
// (relative to dir, the tool file's folder), read once at load.
func kindContentOf(cs kindContentSpec, dir string) (Content, error) {
	c := Content{Type: cs.Type, Text: cs.Text, MIMEType: cs.MIMEType, URI: cs.URI, Name: cs.Name}
	if c.Type == "" {
		c.Type = ContentText
	}
	switch {
	case cs.DataBase64 != "" && cs.File != "":
		return c, errors.New("data_base64 and file: choose one")
	case cs.DataBase64 != "":
		b, err := base64.StdEncoding.DecodeString(cs.DataBase64)
		if err != nil {
			return c, fmt.Errorf("data_base64: %w", err)
		}
		c.Data = b
	case cs.File != "":
		path := cs.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("file: %w", err)
		}
		c.Data = b
	}
	return c, nil
}

func kindStepOf(st kindStepSpec, name string) (kindStep, error) {
	var ks kindStep
	n := 0
	var err error
	if st.Log != nil {
		n++
		ks.level = LogLevel(st.Log.Level)
		if ks.level == "" {
			ks.level = LevelInfo
		}
		if !slices.Contains(kindLevels, ks.level) {
			return ks, fmt.Errorf("%s: log level %q is not one of %v", name, ks.level, kindLevels)
		}
		t, err := newTplText(name+" message", st.Log.Message)
		if err != nil {
			return ks, err
		}
		ks.log = &t
	}
	if st.Progress != nil {
		n++
		ks.progress = &[2]float64{st.Progress.Progress, st.Progress.Total}
		if ks.progressM, err = newTplText(name+" message", st.Progress.Message); err != nil {
			return ks, err
		}
	}
	if st.Sleep != "" {
		n++
		if ks.sleep, err = time.ParseDuration(st.Sleep); err != nil || ks.sleep < 0 {
			return ks, fmt.Errorf("%s: sleep: %q is not a duration like \"50ms\"", name, st.Sleep)
		}
	}
	if s := st.Sample; s != nil {
		n++
		msgs := make([]SampleMessage, 0, len(s.Messages)+1)
		if s.Prompt != "" {
			msgs = append(msgs, SampleMessage{Role: "user", Text: s.Prompt})
		}
		for _, m := range s.Messages {
			if m.Role != "user" && m.Role != "assistant" {
				return ks, fmt.Errorf("%s: sample: role %q is not user or assistant", name, m.Role)
			}
			msgs = append(msgs, SampleMessage{Role: m.Role, Text: m.Text})
		}
		if len(msgs) == 0 {
			return ks, fmt.Errorf("%s: sample: needs a prompt or messages", name)
		}
		for i, m := range msgs {
			t, err := newTplText(fmt.Sprintf("%s message %d", name, i+1), m.Text)
			if err != nil {
				return ks, err
			}
			ks.sample = append(ks.sample, kindSampleMsg{role: m.Role, text: t})
		}
		ks.maxTokens = s.MaxTokens
		if ks.maxTokens <= 0 {
			ks.maxTokens = 1000
		}
		ks.as, ks.inputKey = s.As, s.Key
	}
	if e := st.Elicit; e != nil {
		n++
		t, err := newTplText(name+" message", e.Message)
		if err != nil {
			return ks, err
		}
		ks.elicit = &t
		if len(e.Schema) > 0 && string(e.Schema) != "null" {
			// Read as a tool file's input_schema is (see internal/schemadec).
			s, err := schemadec.Decode(e.Schema)
			if err != nil {
				return ks, fmt.Errorf("%s: elicit: schema: %w", name, err)
			}
			ks.elicitWith = cmp.Or(s, &jsonschema.Schema{})
		}
		ks.as, ks.inputKey = e.As, e.Key
	}
	if r := st.Roots; r != nil {
		n++
		ks.roots = true
		ks.as, ks.inputKey = r.As, r.Key
	}
	if st.Ask != nil {
		n++
		if len(st.Ask) == 0 {
			return ks, fmt.Errorf("%s: ask: needs questions (elicit, sample or roots steps)", name)
		}
		keys := map[string]bool{}
		for i, q := range st.Ask {
			qname := fmt.Sprintf("%s ask %d", name, i+1)
			qs, err := kindStepOf(q, qname)
			if err != nil {
				return ks, err
			}
			if qs.elicit == nil && qs.sample == nil && !qs.roots {
				return ks, fmt.Errorf("%s: an ask step asks only elicit, sample and roots steps", qname)
			}
			if qs.inputKey != "" {
				if keys[qs.inputKey] {
					return ks, fmt.Errorf("%s: key %q: another question of the step has it", qname, qs.inputKey)
				}
				keys[qs.inputKey] = true
			}
			ks.ask = append(ks.ask, qs)
		}
	}
	if ks.inputKey == "" && ks.as != "" && srvCheckInputKey(ks.as) == nil {
		// A step's answer is asked for under its name unless key: names
		// another: clients (and the conformance suite) match the two.
		ks.inputKey = ks.as
	} else if ks.inputKey != "" {
		if err := srvCheckInputKey(ks.inputKey); err != nil {
			return ks, fmt.Errorf("%s: key: %w", name, err)
		}
	}
	if st.BeforeTask {
		if ks.elicit == nil && ks.sample == nil && !ks.roots && ks.ask == nil {
			return ks, fmt.Errorf("%s: before_task belongs to a step that asks (elicit, sample, roots or ask)", name)
		}
		ks.beforeTask = true
	}
	if st.Fail != "" {
		n++
		t, err := newTplText(name+" fail", st.Fail)
		if err != nil {
			return ks, err
		}
		ks.fail = &t
	}
	if n != 1 {
		return ks, fmt.Errorf("%s: needs exactly one of log, progress, sleep, sample, elicit, roots, ask, fail", name)
	}
	return ks, nil
}

// Handle runs the steps in order, then renders the content.
func (h *kindHandler) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	data := map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &data); err != nil {
			return nil, wield.Errorf(wield.ErrValidation, "arguments: %v", err)
		}
	}
	for i, st := range h.steps {
		if err := st.run(ctx, data); err != nil {
			var we *wield.Error
			if errors.As(err, &we) {
				return nil, err
			}
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	items := make([]Content, len(h.content))
	for i, tc := range h.content {
		c, err := tc.render(data)
		if err != nil {
			return nil, fmt.Errorf("content %d: %w", i+1, err)
		}
		items[i] = c
	}
	return ContentOutput(items...)
}

func (st kindStep) run(ctx context.Context, data map[string]any) error {
	switch {
	case st.log != nil:
		msg, err := st.log.render(data)
		if err != nil {
			return err
		}
		if err := Log(ctx, st.level, msg); err != nil && !errors.Is(err, ErrNotMCP) {
			return err
		}
	case st.progress != nil:
		msg, err := st.progressM.render(data)
		if err != nil {
			return err
		}
		return Progress(ctx, st.progress[0], st.progress[1], msg)
	case st.sleep > 0:
		t := time.NewTimer(st.sleep)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	case st.elicit != nil || st.sample != nil || st.roots:
		// One question: asked, and its answer kept, as an ask step's.
		q, err := st.question(data)
		if err != nil {
			return err
		}
		ans, err := Ask(ctx, q)
		if err != nil {
			kind, what := st.kind()
			return kindAskError(what, srvRenameAsk(err, kind))
		}
		st.keep(data, ans[0])
	case st.ask != nil:
		qs := make([]Question, len(st.ask))
		for i, q := range st.ask {
			var err error
			if qs[i], err = q.question(data); err != nil {
				return err
			}
		}
		ans, err := Ask(ctx, qs...)
		if err != nil {
			return kindAskError("the questions asked", err)
		}
		for i, q := range st.ask {
			q.keep(data, ans[i])
		}
	case st.fail != nil:
		msg, err := st.fail.render(data)
		if err != nil {
			return err
		}
		return wield.Errorf(wield.ErrExecution, "%s", msg)
	}
	return nil
}

// question is the question of an elicit, sample or roots step.
func (st kindStep) question(data map[string]any) (Question, error) {
	q := Question{Key: st.inputKey}
	switch {
	case st.elicit != nil:
		msg, err := st.elicit.render(data)
		if err != nil {
			return q, err
		}
		q.Elicit = &ElicitQuestion{Message: msg, Schema: st.elicitWith}
	case st.sample != nil:
		q.Sample = &SampleQuestion{MaxTokens: st.maxTokens}
		for _, m := range st.sample {
			text, err := m.text.render(data)
			if err != nil {
				return q, err
			}
			q.Sample.Messages = append(q.Sample.Messages, SampleMessage{Role: m.role, Text: text})
		}
	default:
		q.Roots = true
	}
	return q, nil
}

// kind names the question of an elicit, sample or roots step: as the
// client's error says it (elicit, sample, roots) and as the model reads
// it (elicitation, sampling, roots).
func (st kindStep) kind() (kind, what string) {
	switch {
	case st.elicit != nil:
		return "elicit", "elicitation"
	case st.sample != nil:
		return "sample", "sampling"
	}
	return "roots", "roots"
}

// keep puts the answer to an elicit, sample or roots step under its as:
// name.
func (st kindStep) keep(data map[string]any, a Answer) {
	if st.as == "" {
		return
	}
	switch {
	case st.elicit != nil:
		data[st.as] = map[string]any{"action": a.Action, "content": a.Content}
	case st.sample != nil:
		data[st.as] = map[string]any{"text": a.Sampled.Text, "role": a.Sampled.Role, "model": a.Sampled.Model, "stop_reason": a.Sampled.StopReason}
	default:
		roots := make([]any, len(a.Roots))
		for i, r := range a.Roots {
			roots[i] = map[string]any{"uri": r.URI, "name": r.Name}
		}
		data[st.as] = map[string]any{"roots": roots}
	}
}

// clientNeeds says which client capabilities the steps need: those that
// ask before the first fail step.
func (h *kindHandler) clientNeeds() []string {
	var needs []string
	add := func(c string) {
		if !slices.Contains(needs, c) {
			needs = append(needs, c)
		}
	}
	for _, st := range h.steps {
		if st.fail != nil {
			break
		}
		for _, one := range append([]kindStep{st}, st.ask...) {
			switch {
			case one.elicit != nil:
				add("elicitation")
			case one.sample != nil:
				add("sampling")
			case one.roots:
				add("roots")
			}
		}
	}
	return needs
}

// kindAskError words a failed request to the client for the model.
func kindAskError(what string, err error) error {
	switch {
	case errors.Is(err, ErrNotMCP):
		return wield.Errorf(wield.ErrExecution, "this tool needs an MCP client that supports %s", what)
	case errors.Is(err, ErrUnsupported):
		return wield.Errorf(wield.ErrExecution, "the MCP client does not support %s", what)
	}
	return wield.Errorf(wield.ErrExecution, "%s failed: %v", what, err)
}

// firstQuestions are the questions of the first step, rendered with the
// arguments, when it says before_task (an elicit, sample, roots or ask
// step) and each question has a key: nothing has run before them, so a
// task tool asks them before its task is made (see srvTaskFirst). nil
// otherwise.
func (h *kindHandler) firstQuestions(args json.RawMessage) ([]Question, error) {
	if len(h.steps) == 0 || !h.steps[0].beforeTask {
		return nil, nil
	}
	data := map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &data); err != nil {
			return nil, wield.Errorf(wield.ErrValidation, "arguments: %v", err)
		}
	}
	st := h.steps[0]
	steps := st.ask
	if st.elicit != nil || st.sample != nil || st.roots {
		steps = []kindStep{st}
	}
	var qs []Question
	for _, one := range steps {
		if one.inputKey == "" {
			return nil, nil
		}
		q, err := one.question(data)
		if err != nil {
			return nil, err
		}
		qs = append(qs, q)
	}
	return qs, nil
}
