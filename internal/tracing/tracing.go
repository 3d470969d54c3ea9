// Package tracing is kubepact's OpenTelemetry tracing outside the MCP
// layer: Setup turns OTLP export on from the standard OTEL_* variables
// (off by default), and Transport carries the W3C trace context, with a
// client span, on the outgoing HTTP requests (a generated tool's call to
// its service, the registry client's requests). It imports nothing of the
// module; the MCP spans themselves are package mcp's.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of kubepact's spans.
const Scope = "github.com/kubepact/kubepact"

// Propagator is the one context format kubepact reads and writes: W3C
// trace context (traceparent, tracestate), in HTTP headers and in MCP
// _meta alike.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// initialProvider is the global TracerProvider before anything set one:
// otel's delegating provider, which makes a non-recording span object for
// every Start.
var initialProvider = otel.GetTracerProvider()

// Recording reports whether the global TracerProvider may record spans:
// one was installed (by Setup, or by a test) that is neither the initial
// delegating one nor the no-op one. When it is false a span's only effect
// is to carry the parent's span context, which the context already does,
// so callers skip starting one: a tool call then makes no span objects.
func Recording() bool {
	switch tp := otel.GetTracerProvider(); tp.(type) {
	case noop.TracerProvider, *noop.TracerProvider:
		return false
	default:
		return tp != initialProvider
	}
}

// Options configure Setup.
type Options struct {
	// Service is service.name unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise (default "kubepact").
	Service string
	// Version is service.version.
	Version string
	// Logger receives the exporter's failures (the zero Logger: stderr).
	Logger logr.Logger
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// Setup installs the process's TracerProvider as the environment says
// and returns the function that flushes and stops it. Export is off
// unless OTEL_TRACES_EXPORTER=otlp, or OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (OTEL_TRACES_EXPORTER=none
// and OTEL_SDK_DISABLED=true win over both); it is then OTLP over HTTP
// with protobuf, every other OTEL_EXPORTER_OTLP_* (headers, timeout,
// certificates), OTEL_TRACES_SAMPLER and OTEL_BSP_* read by the SDK.
// Off, the global provider stays the no-op one: spans cost an interface
// call, and trace context received is still passed on.
func Setup(ctx context.Context, opts *Options) (shutdown func(context.Context) error, err error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Service == "" {
		o.Service = "kubepact"
	}
	none := func(context.Context) error { return nil }
	on, err := exportEnabled(o.Getenv)
	if err != nil || !on {
		return none, err
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := strings.TrimSpace(o.Getenv(v)); p != "" {
			if p != "http/protobuf" {
				return none, fmt.Errorf("%s=%q is not supported: kubepact exports OTLP over HTTP with protobuf; set it to http/protobuf, or unset it", v, p)
			}
			break // the traces-specific one wins
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return none, fmt.Errorf("the OTLP trace exporter could not be configured from OTEL_EXPORTER_OTLP_*: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", o.Service)}
	if o.Version != "" {
		attrs = append(attrs, attribute.String("service.version", o.Version))
	}
	// Later detectors win: the environment over kubepact's defaults.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && res == nil {
		return none, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	if o.Logger.GetSink() != nil {
		otel.SetLogger(o.Logger)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(Propagator)
	return tp.Shutdown, nil
}

// exportEnabled reads whether the environment asks for trace export.
func exportEnabled(getenv func(string) string) (bool, error) {
	if v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); v != "" {
		if off, err := strconv.ParseBool(v); err != nil {
			return false, fmt.Errorf("OTEL_SDK_DISABLED=%q: want true or false", v)
		} else if off {
			return false, nil
		}
	}
	switch e := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); e {
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "", nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER=%q is not supported: kubepact exports traces with otlp, or none", e)
	}
}

// Transport wraps base so that each request it sends is a client span,
// the child of the span in the request's context (from the global
// TracerProvider, the one Setup installs), and carries that span's
// context in traceparent and tracestate. A request whose context holds
// no trace is sent as it is.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base}
}

type transport struct{ base http.RoundTripper }

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !Recording() {
		// No span to start: the request carries its context's trace, if
		// it has one, as the no-op span would.
		if !trace.SpanContextFromContext(r.Context()).IsValid() {
			return t.base.RoundTrip(r)
		}
		return t.base.RoundTrip(carrying(r.Context(), r))
	}
	ctx, span := otel.GetTracerProvider().Tracer(Scope).Start(r.Context(), r.Method, trace.WithSpanKind(trace.SpanKindClient))
	if !span.SpanContext().IsValid() {
		return t.base.RoundTrip(r)
	}
	if span.IsRecording() {
		port := r.URL.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[r.URL.Scheme]
		}
		n, _ := strconv.Atoi(port)
		// url.full without the query or user info: either may hold a
		// credential.
		span.SetAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("server.address", r.URL.Hostname()),
			attribute.Int("server.port", n),
			attribute.String("url.full", r.URL.Scheme+"://"+r.URL.Host+r.URL.EscapedPath()),
		)
	}
	defer span.End()
	resp, err := t.base.RoundTrip(carrying(ctx, r))
	if err != nil {
		span.SetAttributes(attribute.String("error.type", errorType(err)))
		span.SetStatus(codes.Error, "the request got no response")
		return resp, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
		span.SetStatus(codes.Error, "")
	}
	return resp, nil
}

// carrying is a copy of r with ctx, whose headers carry ctx's trace
// context: a RoundTripper does not change the request it is given.
func carrying(ctx context.Context, r *http.Request) *http.Request {
	out := r.Clone(ctx)
	Propagator.Inject(ctx, propagation.HeaderCarrier(out.Header))
	return out
}

// errorType is a low-cardinality name of a transport failure.
func errorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	default:
		return "_OTHER"
	}
}
