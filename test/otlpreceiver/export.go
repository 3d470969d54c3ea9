package otlpreceiver

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// ExportCall posts one call orders -> payments ("POST /charges") to the
// OTLP/HTTP endpoint (a full URL, /v1/traces included) as two services
// would: a CLIENT span of orders and its child SERVER span of payments,
// one TracerProvider and one export per service through the OpenTelemetry
// SDK's own exporter, retries off, with "Authorization: Bearer token". It
// returns the first export's error, so a test can tell a refusal (the
// error names the HTTP status) from an acceptance.
func ExportCall(t testing.TB, endpoint, token string) error {
	t.Helper()
	var parent trace.SpanContext
	for _, svc := range []string{"orders", "payments"} {
		exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(endpoint),
			otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + token}),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		if err != nil {
			t.Fatal(err)
		}
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
			sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", svc))))
		ctx, kind := t.Context(), trace.SpanKindClient
		if svc == "payments" {
			ctx, kind = trace.ContextWithRemoteSpanContext(ctx, parent), trace.SpanKindServer
		}
		_, span := tp.Tracer("otlpreceiver").Start(ctx, "POST /charges", trace.WithSpanKind(kind))
		parent = span.SpanContext()
		span.End()
		err = exp.ExportSpans(t.Context(), rec.Ended())
		_ = exp.Shutdown(context.WithoutCancel(t.Context()))
		_ = tp.Shutdown(context.WithoutCancel(t.Context()))
		if err != nil {
			return err
		}
	}
	return nil
}
