package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kubepact/kubepact/internal/tracing"
)

// Traces. Every MCP request the server receives is a SERVER span named
// as the MCP semantic conventions say ("tools/call pacto_schema",
// "tools/list"), and every tool call has an INTERNAL span
// "execute_tool NAME" beneath it, the parent of what the tool sends (a
// generated tool's HTTP call to its service, a registry request: package
// tracing's Transport puts the W3C context on them). The caller's trace
// context is read from params._meta (traceparent, tracestate: the
// 2026-07-28 spec, SEP-414) or, without one there, from the HTTP
// request's headers. Spans go to the global TracerProvider, which
// tracing.Setup installs from the OTEL_* variables; without them it is
// the no-op one, and a caller's context is still passed on.
//
// A call answered with an error (a tool error, a JSON-RPC error the
// server wrote) carries its trace id, so that the id a user reports
// finds the trace and the audit line: in the result's _meta under
// TraceIDMeta, in a JSON-RPC error's data as "traceId".

// TraceIDMeta is the _meta key of the trace id on an error result.
const TraceIDMeta = "kubepact/traceId"

// traceCarrier reads W3C trace context from a request's _meta.
type traceCarrier map[string]any

func (c traceCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}
func (c traceCarrier) Set(string, string) {}
func (c traceCarrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// remoteContext is ctx with the caller's span context: from _meta, else
// from the HTTP headers.
func remoteContext(ctx context.Context, req sdk.Request) context.Context {
	// A request without params holds a nil pointer of its params type.
	if p := req.GetParams(); p != nil && (reflect.ValueOf(p).Kind() != reflect.Pointer || !reflect.ValueOf(p).IsNil()) {
		if meta := p.GetMeta(); meta != nil {
			if c := tracing.Propagator.Extract(ctx, traceCarrier(meta)); trace.SpanContextFromContext(c).IsValid() {
				return c
			}
		}
	}
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		return tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(extra.Header))
	}
	return ctx
}

// traceRequests returns receiving middleware that makes every request a
// span (see above). It is the outermost: the audit line and every error
// answer see the span.
func (s *Server) traceRequests() sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			ctx = remoteContext(ctx, req)
			// Without a recording provider the caller's span (if any) is
			// the request's, as a no-op span would carry it.
			span := trace.SpanFromContext(ctx)
			if tracing.Recording() {
				name, tool := method, ""
				if call, ok := req.(*sdk.CallToolRequest); ok && call.Params != nil {
					tool = call.Params.Name
					if _, known := s.tools[tool]; known {
						name += " " + tool // low cardinality: only registered names
					}
				}
				ctx, span = otel.GetTracerProvider().Tracer(tracing.Scope).Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer))
				defer span.End()
				if span.IsRecording() {
					span.SetAttributes(requestAttributes(method, tool, req)...)
				}
			}
			res, err := next(ctx, method, req)
			if !span.SpanContext().IsValid() {
				return res, err
			}
			traceID := span.SpanContext().TraceID().String()
			var we *jsonrpc.Error
			switch {
			case errors.As(err, &we):
				code := strconv.FormatInt(we.Code, 10)
				span.SetAttributes(attribute.String("error.type", code), attribute.String("rpc.response.status_code", code))
				span.SetStatus(codes.Error, we.Message)
				err = withTraceID(we, traceID)
			case err != nil:
				span.SetAttributes(attribute.String("error.type", "_OTHER"))
				span.SetStatus(codes.Error, "")
			default:
				if r, ok := res.(*sdk.CallToolResult); ok && r != nil && r.IsError {
					span.SetAttributes(attribute.String("error.type", "tool_error"))
					if code := errorCodeOf(r); code != "" {
						span.SetAttributes(attribute.String("kubepact.error.code", code))
					}
					span.SetStatus(codes.Error, "")
					if r.Meta == nil {
						r.Meta = sdk.Meta{}
					}
					r.Meta[TraceIDMeta] = traceID
				}
			}
			return res, err
		}
	}
}

// requestAttributes are the MCP semantic conventions' attributes of a
// request span.
func requestAttributes(method, tool string, req sdk.Request) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", method), attribute.String("jsonrpc.protocol.version", "2.0")}
	if tool != "" {
		attrs = append(attrs, attribute.String("gen_ai.tool.name", tool), attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	if ss, ok := req.GetSession().(*sdk.ServerSession); ok && ss != nil {
		if id := ss.ID(); id != "" {
			attrs = append(attrs, attribute.String("mcp.session.id", id))
		}
	}
	if pv, ok := req.(interface{ ProtocolVersion() string }); ok {
		if v := pv.ProtocolVersion(); v != "" {
			attrs = append(attrs, attribute.String("mcp.protocol.version", v))
		}
	}
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		attrs = append(attrs, attribute.String("network.transport", "tcp"), attribute.String("network.protocol.name", "http"))
	} else {
		attrs = append(attrs, attribute.String("network.transport", "pipe"))
	}
	return attrs
}

// errorCodeOf is the code of a tool error result, or "".
func errorCodeOf(r *sdk.CallToolResult) string {
	switch sc := r.StructuredContent.(type) {
	case errorEnvelope:
		if sc.Error != nil {
			return sc.Error.Code
		}
	case argumentFault:
		if sc.Error != nil {
			return sc.Error.Code
		}
	}
	return ""
}

// withTraceID is a copy of we whose data (an object, or none) carries
// traceId; other data is left as it is.
func withTraceID(we *jsonrpc.Error, traceID string) *jsonrpc.Error {
	data := map[string]any{}
	if len(we.Data) > 0 && json.Unmarshal(we.Data, &data) != nil {
		return we
	}
	data["traceId"] = traceID
	b, err := json.Marshal(data)
	if err != nil {
		return we
	}
	return &jsonrpc.Error{Code: we.Code, Message: we.Message, Data: b}
}

// toolSpan starts the INTERNAL span of a tool's own work.
func toolSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	if !tracing.Recording() {
		// ctx keeps the request's span context; the span returned is a
		// no-op one, so the caller's End never ends the request's span.
		return ctx, noop.Span{}
	}
	ctx, span := otel.GetTracerProvider().Tracer(tracing.Scope).Start(ctx, "execute_tool "+name, trace.WithSpanKind(trace.SpanKindInternal))
	if span.IsRecording() {
		span.SetAttributes(attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", name))
	}
	return ctx, span
}

// traceIDOf is the trace id of ctx's span, or "".
func traceIDOf(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return sc.TraceID().String()
	}
	return ""
}
