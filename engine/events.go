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
	case wield.EventPermissionRequested, wield.EventPermissionDecided:
		ev.ApprovalID = k.approvalID
	case wield.EventExecutionStarted:
		ev.Time = k.res.StartedAt
	case wield.EventExecutionCompleted, wield.EventExecutionFailed, wield.EventValidationError:
		ev.ErrorType = k.res.ErrorType
		// It may quote a URL with a key, or a refused value with a secret.
		ev.Error = e.redactor.errorText(k.res, k.secrets())
		if t == wield.EventValidationError {
			ev.Message = ev.Error
		}
		ev.Duration = k.res.Duration
		ev.Attempts = k.res.Attempts
		ev.Time = k.res.FinishedAt
	}
	e.bus.Publish(ev)
}

// secrets are the tool's own secret parameters, when the tool is known.
func (k *call) secrets() []string {
	if k.entry == nil {
		return nil
	}
	return k.entry.Tool.Secrets
}
