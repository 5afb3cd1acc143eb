package main

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/wieldhq/wield"
	"github.com/wieldhq/wield/internal/otlphttp"
)

// tracing sets up OpenTelemetry traces when an OTLP endpoint is configured
// the standard way (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTLP over HTTP; the other OTEL_*
// variables apply too, read by internal/otlphttp as otlptracehttp reads
// them, without the gRPC it links). It returns nil when none is, and otherwise the
// tracer and the function that flushes and stops it.
func tracing(ctx context.Context) (trace.Tracer, func(context.Context) error, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return nil, nil, nil
	}
	exp, err := otlptrace.New(ctx, otlphttp.NewClient())
	if err != nil {
		return nil, nil, fmt.Errorf("opentelemetry: %w", err)
	}
	name := os.Getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "wield"
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Tracer("github.com/wieldhq/wield"), tp.Shutdown, nil
}

// tracedHandler gives every request a span (and takes the caller's trace
// context from its headers).
func tracedHandler(h http.Handler) http.Handler {
	return otelhttp.NewHandler(h, "wield", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		if r.Pattern != "" {
			return r.Pattern
		}
		return r.Method + " " + r.URL.Path
	}))
}

// tracedStore adds a span for every finished call, from its arrival to its
// end, as a child of the request that made it: the record is saved with
// the call's context.
type tracedStore struct {
	wield.Storage
	tracer trace.Tracer
}

// Save records the call's span, then the call.
func (s tracedStore) Save(ctx context.Context, r *wield.Record) error {
	res := r.Result
	_, span := s.tracer.Start(ctx, "tool "+res.Tool, trace.WithTimestamp(r.QueuedAt), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("wield.tool", res.Tool),
			attribute.String("wield.call_id", res.CallID),
			attribute.Bool("wield.ok", res.OK),
			attribute.Int("wield.attempts", res.Attempts),
			attribute.Int64("wield.queue_wait_us", res.QueueWait.Microseconds()),
			attribute.String("wield.category", string(r.Category)),
		))
	if r.Call != nil && r.Call.Caller.ConversationID != "" {
		span.SetAttributes(attribute.String("wield.conversation_id", r.Call.Caller.ConversationID))
	}
	if !res.OK {
		span.SetAttributes(attribute.String("wield.error_type", string(res.ErrorType)))
		span.SetStatus(codes.Error, string(res.ErrorType))
	}
	span.End(trace.WithTimestamp(res.FinishedAt))
	return s.Storage.Save(ctx, r)
}
