package wield

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/wieldhq/wield/internal/jsonenc"
	"github.com/wieldhq/wield/schema"
)

// ValidationError is one problem with a call's arguments, written so a model
// can correct itself: where (a path like "options.limit" or "items[2]"; empty
// for the arguments as a whole) and what was expected against what came.
type ValidationError = schema.FieldError

// Result is what a call produced. A failed call is a Result too, with OK false
// and an ErrorType; only failures of the system itself are Go errors.
type Result struct {
	CallID           string            `json:"call_id"`
	Tool             string            `json:"tool"`
	OK               bool              `json:"ok"`
	Output           json.RawMessage   `json:"output,omitempty"`
	Error            string            `json:"error,omitempty"`
	ErrorType        ErrorType         `json:"error_type,omitempty"`
	ValidationErrors []ValidationError `json:"validation_errors,omitempty"`
	Attempts         int               `json:"attempts"`
	StartedAt        time.Time         `json:"started_at"`
	FinishedAt       time.Time         `json:"finished_at"`
	// Duration is the time from the call's arrival to its result, queueing included.
	Duration time.Duration `json:"-"`
	// QueueWait is how long the call waited for capacity.
	QueueWait time.Duration `json:"-"`
	// Metadata carries facts about the call: truncated, original_bytes, replayed, ...
	Metadata map[string]any `json:"metadata,omitempty"`

	// FullOutput is the whole output when Output was cut to the budget; the
	// record keeps it. It is nil when nothing was cut.
	FullOutput json.RawMessage `json:"-"`
}

type resultJSON Result

// MarshalJSON adds duration_ms and queue_wait_ms to the plain fields. The
// JSON is for a model or a person to read, so <, > and & stay as they are,
// in the output too when the tool wrote them escaped (see
// internal/jsonenc).
func (r *Result) MarshalJSON() ([]byte, error) {
	if b, ok := r.appendJSON(make([]byte, 0, 256+len(r.Output)+len(r.Error))); ok {
		return b, nil
	}
	return r.marshalJSON()
}

// AppendJSON appends to b what MarshalJSON returns, so that a server can
// write results from a buffer it reuses (an HTTP answer of wield serve was
// one allocation of a few hundred bytes the more without it). On error, b
// is returned as it was, with the error MarshalJSON returns.
func (r *Result) AppendJSON(b []byte) ([]byte, error) {
	if out, ok := r.appendJSON(b); ok {
		return out, nil
	}
	j, err := r.marshalJSON()
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// resultMS is Result's JSON shape.
type resultMS struct {
	*resultJSON
	DurationMS  float64 `json:"duration_ms"`
	QueueWaitMS float64 `json:"queue_wait_ms,omitempty"`
}

// marshalJSON is MarshalJSON through encoding/json (jsonenc's slow path,
// with HTML left unescaped): what appendJSON writes byte for byte, and what
// it falls back on.
func (r *Result) marshalJSON() ([]byte, error) {
	return jsonenc.Marshal(resultMS{(*resultJSON)(r), ms(r.Duration), ms(r.QueueWait)})
}

// appendJSON writes what marshalJSON writes without encoding/json's
// reflection, which was a sixth of an HTTP call's handler; it reports false
// for what it leaves to encoding/json: output to compact or unescape, or
// refuse, a time outside years 0-9999, a number JSON cannot hold.
func (r *Result) appendJSON(b []byte) ([]byte, bool) {
	ok := true
	b = append(b, `{"call_id":`...)
	b = jsonenc.AppendString(b, r.CallID)
	b = append(b, `,"tool":`...)
	b = jsonenc.AppendString(b, r.Tool)
	b = append(b, `,"ok":`...)
	b = strconv.AppendBool(b, r.OK)
	if len(r.Output) > 0 {
		b = append(b, `,"output":`...)
		if b, ok = jsonenc.AppendRaw(b, r.Output); !ok {
			var err error
			if b, err = jsonenc.Compact(b, r.Output); err != nil {
				return nil, false
			}
		}
	}
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = jsonenc.AppendString(b, r.Error)
	}
	if r.ErrorType != "" {
		b = append(b, `,"error_type":`...)
		b = jsonenc.AppendString(b, string(r.ErrorType))
	}
	if len(r.ValidationErrors) > 0 {
		b = append(b, `,"validation_errors":[`...)
		for i, v := range r.ValidationErrors {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = jsonenc.AppendString(b, v.Path)
			b = append(b, `,"message":`...)
			b = jsonenc.AppendString(b, v.Message)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"attempts":`...)
	b = strconv.AppendInt(b, int64(r.Attempts), 10)
	for _, t := range [2]struct {
		name string
		t    time.Time
	}{{`,"started_at":"`, r.StartedAt}, {`,"finished_at":"`, r.FinishedAt}} {
		var err error
		if b, err = t.t.AppendText(append(b, t.name...)); err != nil {
			return nil, false
		}
		b = append(b, '"')
	}
	if len(r.Metadata) > 0 {
		m, err := jsonenc.Marshal(r.Metadata)
		if err != nil {
			return nil, false
		}
		b = append(append(b, `,"metadata":`...), m...)
	}
	if b, ok = jsonenc.AppendFloat64(append(b, `,"duration_ms":`...), ms(r.Duration)); !ok {
		return nil, false
	}
	if q := ms(r.QueueWait); q != 0 {
		if b, ok = jsonenc.AppendFloat64(append(b, `,"queue_wait_ms":`...), q); !ok {
			return nil, false
		}
	}
	return append(b, '}'), true
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Result) UnmarshalJSON(b []byte) error {
	var w struct {
		*resultJSON
		DurationMS  float64 `json:"duration_ms"`
		QueueWaitMS float64 `json:"queue_wait_ms"`
	}
	w.resultJSON = (*resultJSON)(r)
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Duration = time.Duration(w.DurationMS * float64(time.Millisecond))
	r.QueueWait = time.Duration(w.QueueWaitMS * float64(time.Millisecond))
	return nil
}

// ms is d in milliseconds to three decimals, as the JSON of results and
// events shows durations: msText's value, computed directly for the
// durations calls take. A duration under 2^40 ns (18 minutes) whose last
// three digits are not 500 rounds as its whole microseconds do: d/1e6 as
// a float64 is within 2^-32 of the exact value there, and at least 1e-6
// from a tie, so the text rounds to the same three decimals; ParseFloat
// of that text is the float64 nearest us/1000, which is what dividing two
// exact float64s gives. The text was a sixth of a result's encoding
// (BenchmarkResultJSON; TestMSFast holds the two to the same values).
func ms(d time.Duration) float64 {
	if d >= 0 && d < 1<<40 {
		if r := d % 1000; r != 500 {
			us := d / 1000
			if r > 500 {
				us++
			}
			return float64(us) / 1000
		}
	}
	return msText(d)
}

// msText is ms by formatting and parsing again: the definition.
func msText(d time.Duration) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64), 64)
	return f
}

// Text is the result as one string for text-based model dialects: the
// output itself when it succeeded (a JSON string unquoted, any other JSON
// as the tool wrote it but with <, > and & unescaped, since a model reads
// it as text), "Error: <message>" when it failed, followed by the
// validation errors the message does not already name, one per line (the
// engine's message names them all, so a model reads each once). A
// tool_not_found result is its message alone, as agent frameworks expect:
// "Can not find tool named 'x'", or "Tool 'x' not available in A's toolkit"
// for a call through an agent's toolkit.
func (r *Result) Text() string {
	if r.OK {
		var s string
		if json.Unmarshal(r.Output, &s) == nil {
			return s
		}
		return string(jsonenc.Unescape(r.Output))
	}
	if r.ErrorType == ErrToolNotFound {
		return r.Error
	}
	var b strings.Builder
	b.WriteString("Error: ")
	b.WriteString(r.Error)
	for _, v := range r.ValidationErrors {
		if line := v.String(); !strings.Contains(r.Error, line) {
			b.WriteString("\n- ")
			b.WriteString(line)
		}
	}
	return b.String()
}
