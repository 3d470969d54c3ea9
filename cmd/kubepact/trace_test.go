//go:build !sidecaronly

package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/kubepact/kubepact/test/otlpreceiver"
)

// TestSidecarTraceToUpstream: the real `kubepact sidecar` process,
// exporting because OTEL_EXPORTER_OTLP_ENDPOINT names a real OTLP/HTTP
// receiver, continues the trace an agent starts (its context in _meta)
// through its generated tool to the service beside it, whose own span
// joins the same trace. OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// name the sidecar's resource.
func TestSidecarTraceToUpstream(t *testing.T) {
	rcv := otlpreceiver.Start(t)
	up := rcv.StartService(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "catalog-sidecar")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50") // ms: export soon after the call
	p := startSidecar(t, up.URL)
	cs := p.connect(t)

	agent := rcv.TracerProvider(t, "agent")
	ctx, root := agent.Tracer("agent").Start(t.Context(), "tools/call getHealth", trace.WithSpanKind(trace.SpanKindClient))
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	meta := map[string]any{}
	for k, v := range carrier {
		meta[k] = v
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{}, Meta: meta})
	root.End()
	if err != nil || res.IsError {
		t.Fatalf("getHealth: %v %+v\n%s", err, res, p.stderr)
	}
	traceID := root.SpanContext().TraceID().String()
	// The sidecar exports in batches: wait (bounded) for its three spans.
	deadline := time.Now().Add(20 * time.Second)
	for len(rcv.Trace(traceID)) < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	spans := rcv.Trace(traceID)
	req := otlpreceiver.One(t, spans, "catalog-sidecar", "tools/call getHealth")
	exec := otlpreceiver.One(t, spans, "catalog-sidecar", "execute_tool getHealth")
	call := otlpreceiver.One(t, spans, "catalog-sidecar", "GET")
	svc := otlpreceiver.One(t, spans, "upstream", "GET /healthz")
	if req.ParentSpanID != root.SpanContext().SpanID().String() || exec.ParentSpanID != req.SpanID || call.ParentSpanID != exec.SpanID || svc.ParentSpanID != call.SpanID {
		t.Errorf("parents: request %s (want the agent's %s), execute %s (want %s), call %s (want %s), service %s (want %s)",
			req.ParentSpanID, root.SpanContext().SpanID(), exec.ParentSpanID, req.SpanID, call.ParentSpanID, exec.SpanID, svc.ParentSpanID, call.SpanID)
	}
	if req.Resource["deployment.environment.name"] != "test" || req.Resource["service.version"] == "" {
		t.Errorf("sidecar resource %v: want OTEL_RESOURCE_ATTRIBUTES' deployment.environment.name=test and service.version", req.Resource)
	}
	if tps := up.Traceparents(); len(tps) == 0 || !strings.Contains(tps[len(tps)-1], traceID) {
		t.Errorf("the service received traceparent %q; want trace %s", tps, traceID)
	}
	audited := false
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		audited = audited || (strings.Contains(line, "Tool call") && strings.Contains(line, "getHealth") && strings.Contains(line, traceID))
	}
	if !audited {
		t.Errorf("no audit line of getHealth carries the trace id %s:\n%s", traceID, p.stderr)
	}
}

// TestTracingSettingsRefused: OTEL_* values kubepact cannot honour stop
// it at once, naming the variable and what is accepted.
func TestTracingSettingsRefused(t *testing.T) {
	for _, c := range []struct{ env, value, want string }{
		{"OTEL_TRACES_EXPORTER", "zipkin", `OTEL_TRACES_EXPORTER="zipkin" is not supported: kubepact exports traces with otlp, or none`},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", `OTEL_EXPORTER_OTLP_PROTOCOL="grpc" is not supported: kubepact exports OTLP over HTTP with protobuf`},
		{"OTEL_SDK_DISABLED", "maybe", `OTEL_SDK_DISABLED="maybe": want true or false`},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			t.Setenv(c.env, c.value)
			_, stderr, code := runKubepact(t, "version")
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("%s=%s: exit %d, stderr %q; want 2 and %q", c.env, c.value, code, stderr, c.want)
			}
		})
	}
	// Export off by the variable that says so.
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if _, stderr, code := runKubepact(t, "version"); code != 0 {
		t.Errorf("OTEL_TRACES_EXPORTER=none: exit %d, %s", code, stderr)
	}
}

// TestReadmeTracingLine runs the claude line of the README's "Tracing":
// the command it registers, run as claude would with the environment it
// was given (its collector address, http://127.0.0.1:4318, filled with
// the test receiver's: another process may hold 4318), exports the span
// of a call, under OTEL_SERVICE_NAME and in the caller's trace, by the
// time the client has closed the session and the process has exited.
func TestReadmeTracingLine(t *testing.T) {
	lines := readmeCommands(t, "tracing")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "claude mcp add ") {
		t.Fatalf("the README's tracing block is %q; want one claude mcp add line", lines)
	}
	env, record := readmeEnv(t)
	args := recorded(t, t.TempDir(), env, record, lines[0])
	dash := slices.Index(args, "--")
	if dash < 0 || dash+1 >= len(args) || args[dash+1] != "kubepact" {
		t.Fatalf("%s gave claude %q; want … -- kubepact …", lines[0], args)
	}
	rcv := otlpreceiver.Start(t)
	given := map[string]string{}
	for i := 0; i+1 < dash; i++ {
		if args[i] == "--env" {
			k, v, _ := strings.Cut(args[i+1], "=")
			given[k] = v
			env = append(env, k+"="+strings.ReplaceAll(v, "http://127.0.0.1:4318", rcv.URL))
		}
	}
	if given["OTEL_EXPORTER_OTLP_ENDPOINT"] != "http://127.0.0.1:4318" || given["OTEL_SERVICE_NAME"] == "" {
		t.Fatalf("%s gives claude the environment %v; want OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 and OTEL_SERVICE_NAME", lines[0], given)
	}
	server := exec.CommandContext(t.Context(), kubepactBin, args[dash+2:]...)
	server.Env = env
	cs := connectStdio(t, server)

	agent := rcv.TracerProvider(t, "agent")
	ctx, root := agent.Tracer("agent").Start(t.Context(), "tools/call pacto_server_info", trace.WithSpanKind(trace.SpanKindClient))
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	meta := map[string]any{}
	for k, v := range carrier {
		meta[k] = v
	}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}, Meta: meta}); err != nil || res.IsError {
		t.Fatalf("pacto_server_info: %v %+v", err, res)
	}
	root.End()
	_ = cs.Close() // its stdin closes: the server exits, sending what it batched
	span := otlpreceiver.One(t, rcv.Trace(root.SpanContext().TraceID().String()), given["OTEL_SERVICE_NAME"], "tools/call pacto_server_info")
	if span.ParentSpanID != root.SpanContext().SpanID().String() || span.Attributes["network.transport"] != "pipe" {
		t.Errorf("the server's span: parent %s, attributes %v; want the agent's span %s and network.transport pipe", span.ParentSpanID, span.Attributes, root.SpanContext().SpanID())
	}
}
