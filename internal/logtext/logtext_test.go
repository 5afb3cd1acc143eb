package logtext

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"testing"
	"time"
)

// textCases are log lines of every kind the short way writes, with the
// strings that make the TextHandler quote, and some it leaves to it.
var textCases = []struct {
	msg   string
	attrs []slog.Attr
}{
	{"call", []slog.Attr{slog.String("tool", "echo"), slog.String("call_id", "cr9xwk6c1rmygpf6daxvv3z8b6g"),
		slog.String("args", `{"message":"hello"}`), slog.String("outcome", "ok"), slog.Float64("duration_ms", 0.003),
		slog.String("conversation_id", "GVL4NU77DKR3TYX24ZQ3QEHS2M")}},
	{"no API keys are configured: the API is open to local clients", nil},
	{"", []slog.Attr{slog.String("", "empty key"), slog.String("k", "")}},
	{"x", []slog.Attr{slog.String("a=b", "c d"), slog.String("q", `say "hi"`), slog.String("bs", `C:\path`),
		slog.String("nl", "a\nb"), slog.String("tab", "a\tb"), slog.String("ctl", "\x01\x7f"), slog.String("u", "héllo→"),
		slog.String("nbsp", "a\u00a0b"), slog.String("bad", "\xff"), slog.String("ls", "a\u2028b"), slog.String("zw", "a\u200bb")}},
	{"nums", []slog.Attr{slog.Int("n", -42), slog.Int64("big", math.MaxInt64), slog.Float64("f", 1e21), slog.Float64("g", 1.5e-7),
		slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(-1)), slog.Bool("yes", true), slog.Bool("no", false)}},
	{"other kinds", []slog.Attr{slog.Duration("d", time.Second), slog.Any("err", context.Canceled), slog.Group("g", slog.Int("i", 1)),
		slog.Uint64("u", 7), slog.Time("t", time.Unix(0, 0))}},
}

func textLine(t testing.TB, h slog.Handler, tm time.Time, lv slog.Level, msg string, attrs []slog.Attr) string {
	r := slog.NewRecord(tm, lv, msg, 0)
	r.AddAttrs(attrs...)
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return ""
}

// TestTextHandlerSameAsSlog writes each case through both handlers.
func TestTextHandlerSameAsSlog(t *testing.T) {
	times := []time.Time{time.Date(2026, 11, 27, 8, 31, 59, 787_654_321, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 5*3600+1800)), {},
		// Zones west and with seconds, years of other widths, the
		// local zone, a monotonic reading: each written as slog does.
		time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, time.FixedZone("w", -(9*3600+30*60))),
		time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("s", -(3600+61))),
		time.Date(2026, 3, 4, 5, 6, 7, 8, time.FixedZone("s", 59)),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(0, 1, 1, 0, 0, 0, 1_000_000, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 27, 17, 40, 0, 0, time.Local),
		time.Now()}
	for _, tm := range times {
		for _, lv := range []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError + 2} {
			for _, tc := range textCases {
				textSame(t, tm, lv, tc.msg, tc.attrs)
			}
		}
	}
}

func textSame(t *testing.T, tm time.Time, lv slog.Level, msg string, attrs []slog.Attr) {
	t.Helper()
	var want, got bytes.Buffer
	textLine(t, slog.NewTextHandler(&want, nil), tm, lv, msg, attrs)
	textLine(t, New(&got, nil), tm, lv, msg, attrs)
	if got.String() != want.String() {
		t.Errorf("got  %q\nwant %q", got.String(), want.String())
	}
}

// FuzzTextHandler compares the handlers on any message, key and values.
func FuzzTextHandler(f *testing.F) {
	f.Add("call", "args", `{"message":"hello"}`, int64(3), 0.003, true)
	f.Add("", "", "", int64(0), 0.0, false)
	f.Add("a b", "k=v", "\"\\\x00\xff\u2028", int64(-1), 1e300, true)
	f.Fuzz(func(t *testing.T, msg, key, s string, i int64, fl float64, b bool) {
		textSame(t, time.Unix(1_800_000_000, 123_456_789), slog.LevelInfo, msg,
			[]slog.Attr{slog.String(key, s), slog.Int64(key, i), slog.Float64("f", fl), slog.Bool(s, b)})
	})
}

// FuzzTextHandlerTime compares the handlers on any time in any fixed zone.
func FuzzTextHandlerTime(f *testing.F) {
	f.Add(int64(1_800_000_000), int64(123_456_789), 0)
	f.Add(int64(-62_167_219_200), int64(0), -3599)
	f.Add(int64(253_402_300_799), int64(999_999_999), 50_400)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(25*3600)))
		textSame(t, tm, slog.LevelInfo, "call", textCases[0].attrs)
	})
}

// BenchmarkTextHandler writes the INFO line of an echo call through each
// handler.
func BenchmarkTextHandler(b *testing.B) {
	tm := time.Now()
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{{"slog", slog.NewTextHandler(discard{}, nil)}, {"short", New(discard{}, nil)}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				textLine(b, h.h, tm, slog.LevelInfo, textCases[0].msg, textCases[0].attrs)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
