package wield

import (
	"encoding/json"
	"github.com/wieldhq/wield/schema"
	"strconv"
	"strings"
	"time"
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

// MarshalJSON adds duration_ms and queue_wait_ms to the plain fields.
func (r *Result) MarshalJSON() ([]byte, error) {
	type withMS struct {
		*resultJSON
		DurationMS  float64 `json:"duration_ms"`
		QueueWaitMS float64 `json:"queue_wait_ms,omitempty"`
	}
	return json.Marshal(withMS{(*resultJSON)(r), ms(r.Duration), ms(r.QueueWait)})
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

func ms(d time.Duration) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64), 64)
	return f
}

// Text is the result as one string for text-based model dialects, in the
// words of seed 001: the output itself when it succeeded, "Error: <message>"
// when it failed (the validation errors listed one per line).
func (r *Result) Text() string {
	if r.OK {
		var s string
		if json.Unmarshal(r.Output, &s) == nil {
			return s
		}
		return string(r.Output)
	}
	if r.ErrorType == ErrToolNotFound {
		return r.Error
	}
	var b strings.Builder
	b.WriteString("Error: ")
	b.WriteString(r.Error)
	for _, v := range r.ValidationErrors {
		b.WriteString("\n- ")
		b.WriteString(v.String())
	}
	return b.String()
}
