package engine

import "github.com/wieldhq/wield"

// publish announces a step of a call. Publishing never blocks the call.
func (e *Engine) publish(k *call, t wield.EventType, msg string) {
	if e.bus == nil || k.dry {
		return
	}
	ev := wield.Event{
		Type:           t,
		Tool:           k.Tool,
		CallID:         k.ID,
		CallerID:       k.Caller.ID,
		ConversationID: k.Caller.ConversationID,
		Message:        e.redactor.text(msg),
	}
	switch t {
	case wield.EventExecutionStarted:
		ev.Time = k.res.StartedAt
	case wield.EventExecutionCompleted, wield.EventExecutionFailed, wield.EventValidationError:
		ev.ErrorType = k.res.ErrorType
		ev.Error = e.redactor.text(k.res.Error) // it may quote a URL with a key
		ev.Duration = k.res.Duration
		ev.Attempts = k.res.Attempts
		ev.Time = k.res.FinishedAt
	}
	e.bus.Publish(ev)
}
