package builtin

import (
	"context"
	"os"
	"strings"
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

// SleepInput is the input of sleep (seed 003: seconds).
type SleepInput struct {
	Duration float64 `json:"duration" description:"How long to wait, in seconds" minimum:"0" maximum:"300"`
}

// SleepOutput says how long the call actually slept, in seconds.
type SleepOutput struct {
	Slept float64 `json:"slept"`
}

// MaxSleep bounds the sleep tool; its schema says the same.
const MaxSleep = 300 * time.Second

// Sleep returns the sleep tool: it waits, and stops early (canceled) when
// the call's context ends, so it never holds a slot past its timeout. It
// reports its progress each second, in seconds slept of the duration.
func Sleep() *wield.Tool {
	t := wield.Func("sleep", "Wait for a number of seconds (at most 300), for example before polling again.",
		func(ctx context.Context, in SleepInput) (SleepOutput, error) {
			d := time.Duration(in.Duration * float64(time.Second))
			if d < 0 || d > MaxSleep {
				return SleepOutput{}, wield.Errorf(wield.ErrValidation, "duration %g s is out of range: use 0 to %d seconds", in.Duration, int(MaxSleep/time.Second))
			}
			start := time.Now()
			timer := time.NewTimer(d)
			defer timer.Stop()
			// Each second slept is reported (wield.ReportProgress: the
			// call's execution_progress events, an MCP client's progress).
			var tick <-chan time.Time
			if d > time.Second {
				t := time.NewTicker(time.Second)
				defer t.Stop()
				tick = t.C
			}
			for {
				select {
				case <-timer.C:
					wield.ReportProgress(ctx, in.Duration, in.Duration, "")
					return SleepOutput{Slept: time.Since(start).Seconds()}, nil
				case <-tick:
					wield.ReportProgress(ctx, time.Since(start).Round(time.Second).Seconds(), in.Duration, "")
				case <-ctx.Done():
					return SleepOutput{}, ctx.Err()
				}
			}
		})
	t.Category = wield.CategorySystem
	t.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	t.Tags = []string{"time", "builtin"}
	t.Timeout = MaxSleep + 5*time.Second
	t.Version = "1.0.0"
	t.Source = "builtin"
	return t
}

// EnvOptions says which environment variables the env tools may see. No key
// is visible unless listed: a model must never read a secret by guessing its
// name.
type EnvOptions struct {
	// Allow lists the variable names get_env and set_env may touch, exactly
	// (names are case-sensitive). A name ending in * allows every name with
	// that prefix: "APP_*".
	Allow []string
}

func (o EnvOptions) allowed(key string) bool {
	for _, a := range o.Allow {
		if p, ok := strings.CutSuffix(a, "*"); ok && strings.HasPrefix(key, p) || a == key {
			return true
		}
	}
	return false
}

func (o EnvOptions) check(key string) error {
	if key == "" || strings.ContainsAny(key, "=\x00") {
		return wield.Errorf(wield.ErrValidation, "key %q is not a valid environment variable name", key)
	}
	if !o.allowed(key) {
		return wield.Errorf(wield.ErrPermissionDenied, "Access denied: environment variable %q is not on the allow list", key)
	}
	return nil
}

// GetEnvInput is the input of get_env.
type GetEnvInput struct {
	Key string `json:"key" description:"Name of the environment variable" minLength:"1" maxLength:"256"`
}

// GetEnvOutput holds the value, null when the variable is not set.
type GetEnvOutput struct {
	Value *string `json:"value"`
}

// SetEnvInput is the input of set_env.
type SetEnvInput struct {
	Key   string `json:"key" description:"Name of the environment variable" minLength:"1" maxLength:"256"`
	Value string `json:"value" description:"The new value" maxLength:"32768"`
}

// SetEnvOutput holds the previous value, null when the variable was not set.
type SetEnvOutput struct {
	Previous *string `json:"previous"`
}

// EnvTools returns get_env and set_env, which see only the variables opts
// allows (none with zero options). set_env changes the environment of the
// whole wield process, so it needs a person's confirmation by default.
// Keys off the list give permission_denied; malformed keys validation_error.
func EnvTools(opts EnvOptions) []*wield.Tool {
	opts.Allow = append([]string(nil), opts.Allow...)
	get := wield.Func("get_env", "Read an environment variable of the tool server (only variables on its allow list).",
		func(_ context.Context, in GetEnvInput) (GetEnvOutput, error) {
			if err := opts.check(in.Key); err != nil {
				return GetEnvOutput{}, err
			}
			if v, ok := os.LookupEnv(in.Key); ok {
				return GetEnvOutput{Value: &v}, nil
			}
			return GetEnvOutput{}, nil
		})
	get.Category = wield.CategorySystem
	get.Annotations = wield.Annotations{ReadOnly: true, Idempotent: true}
	set := wield.Func("set_env", "Set an environment variable of the tool server (only variables on its allow list).",
		func(_ context.Context, in SetEnvInput) (SetEnvOutput, error) {
			if err := opts.check(in.Key); err != nil {
				return SetEnvOutput{}, err
			}
			if strings.ContainsRune(in.Value, 0) {
				return SetEnvOutput{}, wield.Errorf(wield.ErrValidation, "value contains a NUL byte, which the environment cannot hold")
			}
			var out SetEnvOutput
			if v, ok := os.LookupEnv(in.Key); ok {
				out.Previous = &v
			}
			if err := os.Setenv(in.Key, in.Value); err != nil {
				return SetEnvOutput{}, wield.Errorf(wield.ErrExecution, "cannot set %s: %v", in.Key, err)
			}
			return out, nil
		})
	set.Category = wield.CategorySystem
	set.Annotations = wield.Annotations{Idempotent: true}
	set.Permission = wield.PermissionConfirm
	for _, t := range []*wield.Tool{get, set} {
		t.Tags = []string{"environment", "builtin"}
		t.Timeout = 5 * time.Second
		t.Version = "1.0.0"
		t.Source = "builtin"
	}
	return []*wield.Tool{get, set}
}
