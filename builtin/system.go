package builtin

import (
	"context"
	"time"

	"github.com/wieldhq/wield"
)

// CurrentTimeInput is the input of current_time.
type CurrentTimeInput struct {
	Timezone string `json:"timezone,omitempty" description:"IANA time zone name such as Europe/Paris or America/New_York" default:"UTC"`
}

// CurrentTimeOutput is seed 003's result: Unix milliseconds, ISO 8601 text
// and the zone.
type CurrentTimeOutput struct {
	Timestamp int64  `json:"timestamp"`
	ISO       string `json:"iso"`
	Timezone  string `json:"timezone"`
}

// CurrentTime returns the current_time tool.
func CurrentTime() *wield.Tool {
	t := wield.Func("current_time", "Get the current date and time, in a time zone.",
		func(_ context.Context, in CurrentTimeInput) (CurrentTimeOutput, error) {
			loc, err := time.LoadLocation(in.Timezone)
			if err != nil || in.Timezone == "" || in.Timezone == "Local" {
				return CurrentTimeOutput{}, wield.Errorf(wield.ErrValidation, "unknown time zone %q: use an IANA name such as Europe/Paris or UTC", in.Timezone)
			}
			now := time.Now().In(loc)
			return CurrentTimeOutput{Timestamp: now.UnixMilli(), ISO: now.Format(time.RFC3339Nano), Timezone: loc.String()}, nil
		})
	t.Category = wield.CategorySystem
	t.Annotations = wield.Annotations{ReadOnly: true}
	t.Tags = []string{"time", "builtin"}
	t.Timeout = 5 * time.Second
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}
