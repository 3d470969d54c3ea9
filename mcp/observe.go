package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// Outcomes recorded per tool call, in the audit line and the metrics.
const (
	outcomeOK            = "ok"             // a result that is not an error
	outcomeToolError     = "tool_error"     // an isError result; the code is logged
	outcomeProtocolError = "protocol_error" // a JSON-RPC error, e.g. an unknown tool
)

// unknownTool is the metric label of calls naming no registered tool, so a
// client cannot grow the label set without bound.
const unknownTool = "_unknown"

// metrics are the per-tool Prometheus collectors.
type metrics struct {
	calls    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kubepact",
			Subsystem: "mcp",
			Name:      "tool_calls_total",
			Help:      "MCP tool calls by tool and outcome (ok, tool_error, protocol_error).",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "kubepact",
			Subsystem: "mcp",
			Name:      "tool_call_duration_seconds",
			Help:      "Latency of MCP tool calls by tool, from request to result.",
			Buckets:   []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.calls, err = register(reg, m.calls); err != nil {
		return nil, err
	}
	if m.duration, err = register(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the equal collector already registered
// (several servers may share one registry, e.g. in the operator's tests).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// auditPairs is how many key/value pairs an audit line can have: tool,
// args, outcome, durationMs, operation, code, cause, session, traceId,
// user and uid.
const auditPairs = 11

// observe returns receiving middleware that, for every tools/call, writes
// one audit line (tool, argument shape, outcome, duration) and updates the
// metrics. The argument shape has names and JSON types, never values.
func (s *Server) observe() sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			call, ok := req.(*sdk.CallToolRequest)
			if method != "tools/call" || !ok {
				return next(ctx, method, req)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			elapsed := time.Since(start)

			name := call.Params.Name
			label := name
			if _, known := s.tools[name]; !known {
				label = unknownTool
			}
			outcome, code := outcomeOf(res, err)
			s.metrics.calls.WithLabelValues(label, outcome).Inc()
			s.metrics.duration.WithLabelValues(label).Observe(elapsed.Seconds())

			// A logger that drops V(0) (no Logger given: logr.Discard) gets
			// no line, so none is built: the shape and the boxing are about
			// ten objects a call.
			if !s.audit.Enabled() {
				return res, err
			}
			// Room for every pair below, so the appends never grow it.
			kv := make([]any, 0, auditPairs*2)
			kv = append(kv,
				"tool", name,
				"args", argShape(call.Params.Arguments),
				"outcome", outcome,
				"durationMs", float64(elapsed.Microseconds())/1000,
			)
			if t := s.tools[name]; t != nil && t.dispatches {
				kv = append(kv, "operation", operationOf(call.Params.Arguments))
			}
			if code != "" {
				kv = append(kv, "code", code)
			}
			// The Go error behind an answer the caller got in words only.
			if cause := causeOf(res); cause != nil {
				kv = append(kv, "cause", cause.Error())
			}
			if id := call.Session.ID(); id != "" {
				kv = append(kv, "session", id)
			}
			if id := traceIDOf(ctx); id != "" {
				kv = append(kv, "traceId", id)
			}
			if who, ok := callerOf(call.Extra); ok {
				kv = append(kv, "user", who.User)
				if who.UID != "" {
					kv = append(kv, "uid", who.UID)
				}
			}
			// Every call is logged at V(0): the audit trail is the point.
			s.audit.Info("Tool call", kv...)
			return res, err
		}
	}
}

// outcomeOf classifies a tools/call answer, with the error code if any.
func outcomeOf(res sdk.Result, err error) (outcome, code string) {
	if err != nil {
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code == CodeRateLimited {
			return outcomeProtocolError, "RATE_LIMITED"
		}
		return outcomeProtocolError, ""
	}
	r, ok := res.(*sdk.CallToolResult)
	if !ok || r == nil || !r.IsError {
		return outcomeOK, ""
	}
	return outcomeToolError, errorCodeOf(r)
}

// causeOf is the error behind an answer written in words — a service
// call that got no complete response, a tool error whose message says
// what a Go error meant — for the audit line; nil when there is none.
func causeOf(res sdk.Result) error {
	r, ok := res.(*sdk.CallToolResult)
	if !ok || r == nil {
		return nil
	}
	switch sc := r.StructuredContent.(type) {
	case *invoke.Result:
		return sc.Cause
	case errorEnvelope:
		if sc.Error != nil {
			return sc.Error.cause
		}
	}
	return nil
}

// argShape describes arguments by name and JSON type only: {"name":"string",
// "dry_run":"boolean"}. Anything that is not an object is described by its
// type alone.
//
// It runs on every call, so it reads the members where they lie instead
// of decoding the object into a map of raw values (a copy of every value):
// the shape is the one that decoding gives, the last of a repeated name
// included, and a name with an escape or a byte outside ASCII is decoded
// as encoding/json decodes it.
func argShape(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]string{}
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return jsonType(raw)
	}
	shape := make(map[string]string, topMembers(raw))
	for i := 1; ; {
		i = skipSpace(raw, i)
		if raw[i] == '}' {
			return shape
		}
		end := stringEnd(raw, i)
		key := raw[i+1 : end-1]
		var name string
		if bytes.IndexByte(key, '\\') >= 0 || !ascii(key) {
			if json.Unmarshal(raw[i:end], &name) != nil {
				return jsonType(raw) // not reached: raw is valid
			}
		} else {
			name = string(key)
		}
		i = skipSpace(raw, end) + 1 // past the colon
		i = skipSpace(raw, i)
		shape[name] = jsonType(raw[i:])
		i = skipSpace(raw, valueEnd(raw, i))
		if raw[i] == ',' {
			i++
		}
	}
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index just past the string that starts at raw[i].
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// valueEnd is the index just past the valid JSON value that starts at raw[i].
func valueEnd(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				j = stringEnd(raw, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(raw)
	}
	j := i
	for j < len(raw) && raw[j] != ',' && raw[j] != '}' && raw[j] != ']' && raw[j] != ' ' && raw[j] != '\t' && raw[j] != '\n' && raw[j] != '\r' {
		j++
	}
	return j
}

func jsonType(v []byte) string {
	if len(v) == 0 {
		return "invalid"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		if v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
			return "number"
		}
		return "invalid"
	}
}
