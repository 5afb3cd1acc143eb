package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// FieldError is one problem with a value, written so a model can correct
// itself: where (a path like "options.limit" or "items[2]"; empty for the
// value as a whole) and what was expected against what came.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String joins path and message as "path: message".
func (e FieldError) String() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// MaxErrors is how many problems one validation reports at most.
const MaxErrors = 20

type seg struct {
	key []byte
	idx int
}

type state struct {
	d     doc
	out   []byte
	errs  []FieldError
	path  []seg
	quiet int // > 0 while trying branches of anyOf/oneOf/not
	more  bool
	// strict refuses every coercion (seed 004's strict_validation).
	strict bool
	// depth and steps bound the walk whatever the schema: nested checks and
	// checks in all, so a schema that refers to itself, or one whose anyOf
	// branches multiply, ends with a problem rather than a spinning core.
	depth, steps int
	spent        string // why the walk stopped early, when it did
	// done and deadline end the walk early (see [Limits]); polled every
	// pollSteps steps, so a small check never reads the clock.
	done     <-chan struct{}
	ctx      context.Context // Limits.Context, whose Done becomes done when first needed
	deadline time.Time
	timedOut bool
}

// pollSteps is how often, in steps, a check looks at its [Limits].
const pollSteps = 1024

// Limits end one normalisation early: a caller gives it its call's
// deadline, so that a value that is costly to check (uniqueItems over many
// items, branches that multiply) ends when the call would, not long after.
// The zero value sets no limit.
type Limits struct {
	// Done, when closed, ends the check (a context's Done).
	Done <-chan struct{}
	// Context, when set, ends the check when it ends, as Done does: its
	// Done is asked for only when a check runs long enough to look at its
	// limits, so that a cancelable context whose channel nobody made yet
	// need not make it for a quick check (an allocation of every call).
	Context context.Context
	// Deadline, when not zero, ends the check once passed.
	Deadline time.Time
	// Strict refuses every coercion, as [Validator.NormalizeStrict] does.
	Strict bool
}

// ErrDeadline is the message of the one [FieldError] of a check that
// [Limits] ended; [Validator.NormalizeWithin] returns it so that a caller
// can tell a check cut short from arguments that are wrong.
const ErrDeadline = "the arguments could not be checked before the call's deadline"

// MaxMessage is the most bytes of a [FieldError]'s Message and of its Path:
// a message is read by a model, and a schema or a value from elsewhere must
// not make it megabytes long.
const MaxMessage = 1024

// maxCheckDepth and maxCheckSteps bound one validation: far more than any
// real schema needs for the deepest arguments [MaxDepth] allows, far less than
// would hold a core for long.
const (
	maxCheckDepth = 4 * MaxDepth * 8
	maxCheckSteps = 1 << 20
)

var states = sync.Pool{New: func() any { return new(state) }}

func getState() *state { return states.Get().(*state) }

func putState(st *state) { states.Put(st) }

// Normalize decodes, coerces, fills defaults and validates a JSON object of
// arguments, and returns it normalised: the same members in the same order,
// with coerced values rewritten, null given for an optional member dropped,
// and missing members that have defaults appended. Empty input and null
// count as {}.
//
// The coercions are the safe ones: a string holding a number for a number or
// integer ("5" → 5), "true"/"false" for a boolean, a string holding a JSON
// array or object for an array or object, a number for a string (5 → "5"),
// and an integral number written as 5.0 for an integer (→ 5).
//
// Keys are case-sensitive. A member not declared in properties is refused when
// the schema declares properties and does not allow others
// (additionalProperties or patternProperties); the message names the close
// match when the case differs. On failure the output is nil and the errors
// say what was wrong, at most [MaxErrors] of them.
func (v *Validator) Normalize(args []byte) ([]byte, []FieldError) {
	return v.normalizeWith(args, false)
}

// NormalizeStrict is [Validator.Normalize] without coercions: every value
// must have the type the schema says ("5" for an integer is refused), as
// seed 004's strict_validation asks. Defaults are still filled in.
func (v *Validator) NormalizeStrict(args []byte) ([]byte, []FieldError) {
	return v.normalizeWith(args, true)
}

// NormalizeContext is [Validator.Normalize] ended by ctx: when ctx is done
// or its deadline passes during the check, the one problem returned says
// [ErrDeadline].
func (v *Validator) NormalizeContext(ctx context.Context, args []byte) ([]byte, []FieldError) {
	dl, _ := ctx.Deadline()
	return v.NormalizeWithin(args, Limits{Context: ctx, Deadline: dl})
}

// NormalizeWithin is [Validator.Normalize] (or NormalizeStrict, with
// l.Strict) within limits: when l.Done closes or l.Deadline passes during
// the check, it stops and the one problem returned says [ErrDeadline]. It
// takes the limits by value, so a caller on a hot path allocates nothing
// for them.
func (v *Validator) NormalizeWithin(args []byte, l Limits) ([]byte, []FieldError) {
	return v.normalizeLimited(args, l)
}

func (v *Validator) normalizeWith(args []byte, strict bool) ([]byte, []FieldError) {
	return v.normalizeLimited(args, Limits{Strict: strict})
}

func (v *Validator) normalizeLimited(args []byte, l Limits) ([]byte, []FieldError) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	st := getState()
	st.strict = l.Strict
	st.done, st.ctx, st.deadline = l.Done, l.Context, l.Deadline
	out, errs := v.normalize(st, args)
	st.d.reset()
	st.out = st.out[:0]
	st.errs = nil
	st.path = st.path[:0]
	st.quiet, st.more, st.strict = 0, false, false
	st.depth, st.steps, st.spent = 0, 0, ""
	st.done, st.ctx, st.deadline, st.timedOut = nil, nil, time.Time{}, false
	if cap(st.out) <= 64<<10 && cap(st.d.nodes) <= 1<<14 {
		putState(st)
	}
	return out, errs
}

func (v *Validator) normalize(st *state, args []byte) ([]byte, []FieldError) {
	root, err := st.d.parse(args)
	if err != nil {
		return nil, []FieldError{{Message: "arguments are not valid JSON: " + err.Error()}}
	}
	if r := v.root; r != nil && r.types == 0 && r.ref == nil && (len(r.props) > 0 || r.addSaid) {
		// A schema with properties but no type still describes an object.
		if k := st.d.nodes[root].kind; k != kObject && (k != kString || st.strict) {
			return nil, []FieldError{{Message: "arguments must be a JSON object, got " + k.String()}}
		}
	}
	st.check(root, v.root, true)
	if st.spent != "" {
		return nil, []FieldError{{Message: st.spent}}
	}
	if len(st.errs) > 0 {
		errs := st.errs
		if st.more {
			errs = append(errs, FieldError{Message: fmt.Sprintf("(more problems not listed after the first %d)", MaxErrors)})
		}
		return nil, errs
	}
	out := make([]byte, len(st.out))
	copy(out, st.out)
	if v.fallback != nil {
		var x any
		if err := json.Unmarshal(out, &x); err != nil {
			return nil, []FieldError{{Message: "arguments are not valid JSON: " + err.Error()}}
		}
		if err := v.fallback.Validate(x); err != nil {
			return nil, []FieldError{{Message: clipText(err.Error())}}
		}
	}
	return out, nil
}

// Validate reports the problems of a value without keeping the normalised form.
func (v *Validator) Validate(args []byte) []FieldError {
	_, errs := v.Normalize(args)
	return errs
}

func (st *state) fail(format string, args ...any) bool {
	if st.quiet > 0 {
		return false
	}
	if len(st.errs) >= MaxErrors {
		st.more = true
		return false
	}
	st.errs = append(st.errs, FieldError{Path: clipText(st.pathString()), Message: clipText(fmt.Sprintf(format, args...))})
	return false
}

// clipText cuts a message to [MaxMessage] bytes, saying so.
func clipText(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	return string(clipBytes([]byte(s), MaxMessage-len(" …"))) + " …"
}

// tick counts n steps of the walk and reports whether it may go on: false
// once the step budget is spent or the limits have ended it.
func (st *state) tick(n int) bool {
	before := st.steps
	st.steps += n
	if st.spent != "" {
		return false
	}
	if st.steps > maxCheckSteps {
		st.spent = "the schema is too deep or too costly to check against these arguments"
		return false
	}
	if before/pollSteps != st.steps/pollSteps && (st.done != nil || st.ctx != nil || !st.deadline.IsZero()) {
		if st.done == nil && st.ctx != nil {
			st.done = st.ctx.Done()
		}
		select {
		case <-st.done:
			st.timedOut = true
		default:
			st.timedOut = !st.deadline.IsZero() && !time.Now().Before(st.deadline)
		}
		if st.timedOut {
			st.spent = ErrDeadline
			return false
		}
	}
	return true
}

func (st *state) pathString() string {
	var b strings.Builder
	for _, s := range st.path {
		if s.key == nil {
			fmt.Fprintf(&b, "[%d]", s.idx)
			continue
		}
		if plainKey(s.key) {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.Write(s.key)
			continue
		}
		q, _ := json.Marshal(string(s.key))
		b.WriteByte('[')
		b.Write(q)
		b.WriteByte(']')
	}
	return b.String()
}

func plainKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// plural writes n and a noun that takes an s: "1 item", "2 items".
func plural(n int, one string) string {
	return pluralWord(n, one, one+"s")
}

// pluralWord writes n and the noun's singular or plural form.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// preview shows a value in a message, shortened. null, true and false are
// their own names ("got null", not "got null null").
func preview(n *node) string {
	const max = 40
	raw := n.raw
	switch n.kind {
	case kNull, kTrue, kFalse:
		return string(raw)
	}
	if len(raw) <= max {
		return n.kind.String() + " " + string(raw)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(raw[cut]) {
		cut--
	}
	return n.kind.String() + " " + string(raw[:cut]) + "…"
}

func valueType(n *node) uint8 {
	switch n.kind {
	case kNull:
		return tNull
	case kTrue, kFalse:
		return tBool
	case kString:
		return tStr
	case kArray:
		return tArr
	case kObject:
		return tObj
	}
	if bytes.ContainsAny(n.raw, ".eE") {
		f, _ := strconv.ParseFloat(string(n.raw), 64)
		if f == math.Trunc(f) && !math.IsInf(f, 0) {
			return tNum | tInt
		}
		return tNum
	}
	return tNum | tInt
}

// check validates node ni against s, writing the normalised value when write
// is set, and reports whether it is valid.
func (st *state) check(ni int32, s *compiled, write bool) bool {
	st.depth++
	defer func() { st.depth-- }()
	if !st.tick(1) {
		return false
	}
	if st.depth > maxCheckDepth {
		st.spent = "the schema is too deep or too costly to check against these arguments"
		return false
	}
	if s == nil {
		if write {
			st.out = append(st.out, st.d.nodes[ni].raw...)
		}
		return true
	}
	for hops := 0; s.ref != nil && s.types == 0 && len(s.props) == 0 && s.enum == nil && len(s.allOf)+len(s.anyOf)+len(s.oneOf) == 0 && s.not == nil; hops++ {
		if hops > maxCheckDepth {
			st.spent = "the schema's references never reach a value"
			return false
		}
		s = s.ref // a plain {"$ref": ...}
	}
	if s.isFalse {
		return st.fail("no value is allowed here")
	}
	n := &st.d.nodes[ni]
	vt := valueType(n)
	if s.types != 0 {
		if s.types&vt == 0 {
			var ci int32
			ok := false
			if !st.strict {
				ci, ok = st.coerce(ni, s.types)
			}
			if !ok {
				return st.fail("expected %s, got %s", typeNames(s.types), preview(n))
			}
			ni = ci
			n = &st.d.nodes[ni]
			vt = valueType(n)
		} else if vt&tInt != 0 && s.types&tNum == 0 && n.kind == kNumber && bytes.ContainsAny(n.raw, ".eE") {
			// 5.0 for an integer: write it as 5 so Go decoders accept it.
			f, _ := strconv.ParseFloat(string(n.raw), 64)
			if math.Abs(f) < 1<<53 {
				ni = st.addScalar(kNumber, strconv.AppendInt(nil, int64(f), 10))
				n = &st.d.nodes[ni]
			}
		}
	}
	ok := true
	switch n.kind {
	case kNumber:
		ok = st.number(n, s)
		if write {
			st.out = append(st.out, n.raw...)
		}
	case kString:
		ok = st.string(n, s)
		if write {
			st.out = append(st.out, n.raw...)
		}
	case kObject:
		ok = st.object(ni, s, write)
	case kArray:
		ok = st.array(ni, s, write)
	default:
		if write {
			st.out = append(st.out, n.raw...)
		}
	}
	if s.enum != nil && !st.inEnum(ni, s.enum) {
		ok = st.fail("must be one of %s; got %s", s.enumText, preview(&st.d.nodes[ni]))
	}
	if s.cnst != nil && !st.equalValue(ni, *s.cnst) {
		ok = st.fail("must be %s; got %s", listValues([]any{*s.cnst}, maxListText), preview(&st.d.nodes[ni]))
	}
	if s.ref != nil && (s.types != 0 || len(s.props) > 0 || s.enum != nil || len(s.allOf)+len(s.anyOf)+len(s.oneOf) > 0 || s.not != nil) {
		ok = st.check(ni, s.ref, false) && ok
	}
	if len(s.allOf)+len(s.anyOf)+len(s.oneOf) > 0 || s.not != nil {
		ok = st.compose(ni, s) && ok
	}
	return ok
}

func (st *state) compose(ni int32, s *compiled) bool {
	ok := true
	for _, sub := range s.allOf {
		ok = st.check(ni, sub, false) && ok
	}
	if len(s.anyOf) > 0 {
		matched := false
		for _, sub := range s.anyOf {
			if st.try(ni, sub) {
				matched = true
				break
			}
		}
		if !matched {
			ok = st.noneMatched(ni, s.anyOf, "at least one")
		}
	}
	if len(s.oneOf) > 0 {
		var hits []int
		for i, sub := range s.oneOf {
			if st.try(ni, sub) {
				hits = append(hits, i)
			}
		}
		switch {
		case len(hits) == 0:
			ok = st.noneMatched(ni, s.oneOf, "exactly one")
		case len(hits) > 1:
			ok = st.fail("matches %d of the allowed schemas (%v), but must match exactly one", len(hits), hits)
		}
	}
	if s.not != nil && st.try(ni, s.not) {
		ok = st.fail("must not match the excluded schema; got %s", preview(&st.d.nodes[ni]))
	}
	return ok
}

// try checks a branch without recording problems.
func (st *state) try(ni int32, s *compiled) bool {
	st.quiet++
	ok := st.check(ni, s, false)
	st.quiet--
	return ok
}

// noneMatched reports the problems of the closest branch, so the model sees
// what one correct shape would need.
func (st *state) noneMatched(ni int32, branches []*compiled, how string) bool {
	if st.quiet > 0 {
		return false
	}
	best, bestN := 0, math.MaxInt
	for i, b := range branches {
		saved := len(st.errs)
		st.check(ni, b, false)
		if n := len(st.errs) - saved; n < bestN {
			best, bestN = i, n
		}
		st.errs = st.errs[:saved]
	}
	st.fail("must match %s of %d allowed schemas; the closest (#%d) says:", how, len(branches), best)
	st.check(ni, branches[best], false)
	return false
}

func (st *state) addScalar(k kind, raw []byte) int32 {
	st.d.nodes = append(st.d.nodes, node{kind: k, raw: raw})
	return int32(len(st.d.nodes) - 1)
}

// coerce turns a value of the wrong type into one of the wanted types when
// that is safe, returning the new node.
func (st *state) coerce(ni int32, want uint8) (int32, bool) {
	n := st.d.nodes[ni]
	switch n.kind {
	case kString:
		c := bytes.TrimSpace(text(&n))
		if want&(tInt|tNum) != 0 && isNumber(c) {
			x := node{kind: kNumber, raw: bytes.Clone(c)}
			if valueType(&x)&want != 0 {
				return st.addScalar(kNumber, x.raw), true
			}
		}
		if want&tBool != 0 {
			switch string(bytes.ToLower(c)) {
			case "true":
				return st.addScalar(kTrue, []byte("true")), true
			case "false":
				return st.addScalar(kFalse, []byte("false")), true
			}
		}
		if want&(tArr|tObj) != 0 && len(c) > 0 && (c[0] == '[' || c[0] == '{') {
			sub := doc{nodes: st.d.nodes, kids: st.d.kids, stack: st.d.stack}
			root, err := sub.parse(bytes.Clone(c))
			if err == nil && valueType(&sub.nodes[root])&want != 0 {
				st.d.nodes, st.d.kids, st.d.stack = sub.nodes, sub.kids, sub.stack
				return root, true
			}
			// Keep what the failed parse appended out of sight.
			st.d.nodes, st.d.kids, st.d.stack = sub.nodes[:len(st.d.nodes)], sub.kids[:len(st.d.kids)], sub.stack[:0]
		}
	case kNumber:
		if want&tStr != 0 {
			raw := make([]byte, 0, len(n.raw)+2)
			raw = append(append(append(raw, '"'), n.raw...), '"')
			return st.addScalar(kString, raw), true
		}
	}
	return 0, false
}

func (st *state) number(n *node, s *compiled) bool {
	if !s.hasMin && !s.hasMax && !s.hasExMin && !s.hasExMax && s.multipleOf == 0 {
		return true
	}
	f, err := strconv.ParseFloat(string(n.raw), 64)
	if err != nil && !math.IsInf(f, 0) {
		return st.fail("%s is not a number", n.raw)
	}
	ok := true
	if s.hasMin && f < s.min {
		ok = st.fail("must be >= %v, got %s", s.min, n.raw)
	}
	if s.hasMax && f > s.max {
		ok = st.fail("must be <= %v, got %s", s.max, n.raw)
	}
	if s.hasExMin && f <= s.exMin {
		ok = st.fail("must be > %v, got %s", s.exMin, n.raw)
	}
	if s.hasExMax && f >= s.exMax {
		ok = st.fail("must be < %v, got %s", s.exMax, n.raw)
	}
	if s.multipleOf != 0 {
		q := f / s.multipleOf
		if math.Abs(q-math.Round(q)) > 1e-9*math.Max(1, math.Abs(q)) {
			ok = st.fail("must be a multiple of %v, got %s", s.multipleOf, n.raw)
		}
	}
	return ok
}

func (st *state) string(n *node, s *compiled) bool {
	if s.minLen < 0 && s.maxLen < 0 && s.pattern == nil && s.formatOK == nil {
		return true
	}
	c := text(n)
	ok := true
	if s.minLen >= 0 || s.maxLen >= 0 {
		l := utf8.RuneCount(c)
		if s.minLen >= 0 && l < s.minLen {
			ok = st.fail("must be at least %s long, got %d", plural(s.minLen, "character"), l)
		}
		if s.maxLen >= 0 && l > s.maxLen {
			ok = st.fail("must be at most %s long, got %d", plural(s.maxLen, "character"), l)
		}
	}
	if s.pattern != nil && !s.pattern.Match(c) {
		ok = st.fail("must match the pattern %s, got %s", s.pattern, preview(n))
	}
	if s.formatOK != nil && !s.formatOK(string(c)) {
		ok = st.fail("must be %s (format %s), got %s", formatWhat[s.format], s.format, preview(n))
	}
	return ok
}

func (s *compiled) lookup(key []byte) int {
	if s.propIdx != nil {
		if i, ok := s.propIdx[string(key)]; ok {
			return i
		}
		return -1
	}
	for i := range s.props {
		if s.props[i].name == string(key) {
			return i
		}
	}
	return -1
}

func (st *state) object(ni int32, s *compiled, write bool) bool {
	n := st.d.nodes[ni]
	ok := true
	var seenSmall uint64
	var seenBig []bool
	if len(s.props) > 64 {
		seenBig = make([]bool, len(s.props))
	}
	seen := func(i int) bool {
		if seenBig != nil {
			return seenBig[i]
		}
		return seenSmall&(1<<uint(i)) != 0
	}
	mark := func(i int, v bool) {
		if seenBig != nil {
			seenBig[i] = v
		} else if v {
			seenSmall |= 1 << uint(i)
		} else {
			seenSmall &^= 1 << uint(i)
		}
	}
	// Strict keys apply on the main walk only: a branch of allOf may declare
	// some of the keys and its sibling the others.
	strict := write && s.hasProps && !s.addSaid
	if write {
		st.out = append(st.out, '{')
	}
	count := 0
	for i := int32(0); i < n.n; i++ {
		kn := &st.d.nodes[st.d.kids[n.kid+2*i]]
		vi := st.d.kids[n.kid+2*i+1]
		key := text(kn)
		pi := s.lookup(key)
		var ps *compiled
		known := pi >= 0
		if known {
			ps = s.props[pi].s
			mark(pi, true)
		}
		for _, pp := range s.patternProps {
			if pp.re.Match(key) {
				if ps == nil {
					ps = pp.s
				} else {
					st.path = append(st.path, seg{key: key})
					ok = st.check(vi, pp.s, false) && ok
					st.path = st.path[:len(st.path)-1]
				}
				known = true
			}
		}
		if !known {
			switch {
			case s.additional != nil:
				ps = s.additional
			case s.addFalse || strict:
				st.path = append(st.path, seg{key: key})
				ok = st.unknownKey(key, s)
				st.path = st.path[:len(st.path)-1]
				continue
			}
		}
		if pi >= 0 && st.d.nodes[vi].kind == kNull && !s.props[pi].required && ps != nil && ps.types != 0 && ps.types&tNull == 0 {
			mark(pi, false) // null for an optional member means "not given"
			continue
		}
		if write {
			if count > 0 {
				st.out = append(st.out, ',')
			}
			st.out = append(st.out, kn.raw...)
			st.out = append(st.out, ':')
		}
		count++
		st.path = append(st.path, seg{key: key})
		ok = st.check(vi, ps, write) && ok
		st.path = st.path[:len(st.path)-1]
	}
	for i := range s.props {
		p := &s.props[i]
		if seen(i) {
			continue
		}
		if p.def != nil {
			if write {
				if count > 0 {
					st.out = append(st.out, ',')
				}
				st.out = append(st.out, p.quoted...)
				st.out = append(st.out, ':')
				st.out = append(st.out, p.def...)
			}
			count++
			continue
		}
		if p.fill {
			// An omitted object whose members have defaults: {} with them.
			if write {
				if count > 0 {
					st.out = append(st.out, ',')
				}
				st.out = append(st.out, p.quoted...)
				st.out = append(st.out, ':')
			}
			count++
			st.path = append(st.path, seg{key: []byte(p.name)})
			ok = st.check(st.addScalar(kObject, []byte("{}")), p.s, write) && ok
			st.path = st.path[:len(st.path)-1]
			continue
		}
		if p.required {
			st.path = append(st.path, seg{key: []byte(p.name)})
			if p.s != nil && p.s.types != 0 {
				ok = st.fail("missing required property (expected %s)", typeNames(p.s.types))
			} else {
				ok = st.fail("missing required property")
			}
			st.path = st.path[:len(st.path)-1]
		}
	}
	if write {
		st.out = append(st.out, '}')
	}
	if s.minProps >= 0 && count < s.minProps {
		ok = st.fail("must have at least %s, got %d", pluralWord(s.minProps, "property", "properties"), count)
	}
	if s.maxProps >= 0 && count > s.maxProps {
		ok = st.fail("must have at most %s, got %d", pluralWord(s.maxProps, "property", "properties"), count)
	}
	return ok
}

func (st *state) unknownKey(key []byte, s *compiled) bool {
	for _, p := range s.props {
		if strings.EqualFold(p.name, string(key)) {
			return st.fail("unknown property; did you mean %q? (names are case-sensitive)", p.name)
		}
	}
	if s.propNames == "" {
		return st.fail("unknown property; this object takes no properties")
	}
	return st.fail("unknown property; expected one of: %s", s.propNames)
}

func (st *state) array(ni int32, s *compiled, write bool) bool {
	n := st.d.nodes[ni]
	ok := true
	if write {
		st.out = append(st.out, '[')
	}
	for i := int32(0); i < n.n; i++ {
		vi := st.d.kids[n.kid+i]
		var is *compiled
		switch {
		case int(i) < len(s.prefix):
			is = s.prefix[i]
		case s.noItems:
			st.path = append(st.path, seg{idx: int(i)})
			ok = st.fail("no item allowed past the first %d", len(s.prefix))
			st.path = st.path[:len(st.path)-1]
			continue
		default:
			is = s.items
		}
		if write && i > 0 {
			st.out = append(st.out, ',')
		}
		st.path = append(st.path, seg{idx: int(i)})
		ok = st.check(vi, is, write) && ok
		st.path = st.path[:len(st.path)-1]
	}
	if write {
		st.out = append(st.out, ']')
	}
	if s.minItems >= 0 && int(n.n) < s.minItems {
		ok = st.fail("must have at least %s, got %d", plural(s.minItems, "item"), n.n)
	}
	if s.maxItems >= 0 && int(n.n) > s.maxItems {
		ok = st.fail("must have at most %s, got %d", plural(s.maxItems, "item"), n.n)
	}
	if s.unique {
		if i, j, dup := st.duplicate(n); dup {
			return st.fail("items must be unique; items %d and %d are equal", i, j)
		}
	}
	return ok
}
