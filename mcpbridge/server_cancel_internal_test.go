package mcpbridge

import (
	"context"
	"errors"
	"testing"

	"github.com/wieldhq/wield"
)

// TestSrvCancelOnPurpose: the SDK's cancellation of a request by ID (no
// cause: the client's notifications/cancelled) reaches the engine as
// wield.ErrCallerCanceled; a connection that failed keeps its own cause,
// so a call whose client went away is not taken as canceled on purpose.
func TestSrvCancelOnPurpose(t *testing.T) {
	gone := errors.New("EOF")
	tests := []struct {
		name    string
		cause   error
		purpose bool
	}{
		{"notifications/cancelled", nil, true},
		{"connection failed", gone, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.Background())
			ctx, stop := srvCancelOnPurpose(parent)
			defer stop()
			cancel(tt.cause)
			<-ctx.Done()
			if got := wield.CanceledOnPurpose(ctx); got != tt.purpose {
				t.Errorf("CanceledOnPurpose = %v (cause %v), want %v", got, context.Cause(ctx), tt.purpose)
			}
		})
	}
}
