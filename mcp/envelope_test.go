package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioPeer drives one stdio session of a server as a client would, line
// by line: the test writes raw lines and reads the server's.
type stdioPeer struct {
	in    io.WriteCloser
	lines chan string
}

// startStdio serves one stdio session of s over pipes, through the same
// transport `kubepact mcp` uses on its standard streams.
func startStdio(t testing.TB, s *Server) *stdioPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- s.serveStdio(t.Context(), inR, outW)
		_ = outW.Close()
	}()
	p := &stdioPeer{in: inW, lines: make(chan string, 64)}
	go readLines(outR, p.lines)
	t.Cleanup(func() {
		_ = inW.Close()
		select {
		case err := <-done:
			// t.Context() is done before cleanups run.
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
				t.Errorf("stdio session ended with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the stdio session did not end when its input did")
		}
	})
	return p
}

// startBinary runs `kubepact mcp` with args and speaks to its standard
// streams line by line.
func startBinary(t *testing.T, args ...string) *stdioPeer {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), kubepactBinary(t), append([]string{"mcp"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &stdioPeer{in: stdin, lines: make(chan string, 64)}
	go readLines(stdout, p.lines)
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	return p
}

func readLines(r io.Reader, into chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 8<<20)
	for sc.Scan() {
		into <- sc.Text()
	}
	close(into)
}

// send writes one raw line.
func (p *stdioPeer) send(t testing.TB, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatalf("writing %q: %v", line, err)
	}
}

// next returns the server's next line; the deadline only keeps a dead
// session from hanging the test.
func (p *stdioPeer) next(t testing.TB) string {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			t.Fatal("the server closed its output: the session ended")
		}
		return l
	case <-time.After(20 * time.Second):
		t.Fatal("no answer from the server")
	}
	return ""
}

// initialize opens the session in the 2025-11-25 era.
func (p *stdioPeer) initialize(t testing.TB) {
	t.Helper()
	p.send(t, initializeBody)
	if _, _, _, isErr := rpcError(t, p.next(t)); isErr {
		t.Fatal("initialize failed")
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// envelopeCase is one message the strict envelope refuses: the same
// refusal on every transport.
type envelopeCase struct {
	name, body string
	code       int
	msg        string // the error message contains it
	id         string // the id answered; "null" when it cannot be known
}

var envelopeCases = []envelopeCase{
	{"key twice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","arguments":{},"name":"pacto_create"}}`,
		codeInvalidRequest, `key "params.name" appears twice`, "7"},
	{"method beside Method", `{"jsonrpc":"2.0","id":7,"method":"tools/list","Method":"tools/call","params":{"name":"pacto_create","arguments":{"name":"x"}}}`,
		codeInvalidRequest, `keys "method" and "Method" differ only in case`, "7"},
	{"Method alone", `{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"pacto_server_info","arguments":{}}}`,
		codeInvalidRequest, `key "Method" differs only in case from the member "method"`, "null"},
	{"ID alone", `{"jsonrpc":"2.0","ID":7,"method":"tools/list"}`,
		codeInvalidRequest, `key "ID" differs only in case from the member "id"`, "null"},
	{"id beside ID", `{"jsonrpc":"2.0","id":7,"ID":8,"method":"tools/list"}`,
		codeInvalidRequest, `keys "id" and "ID" differ only in case`, "null"},
	{"Arguments in params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_server_info","Arguments":{"x":1}}}`,
		codeInvalidRequest, `key "params.Arguments" differs only in case from the member "arguments"`, "7"},
	{"_meta member", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"ProgressToken":1}}}`,
		codeInvalidRequest, `key "params._meta.ProgressToken" differs only in case from the member "progressToken"`, "7"},
	{"case twins deep in arguments", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_check","arguments":{"path":".","opts":{"amount":1,"Amount":1000}}}}`,
		codeInvalidRequest, `keys "params.arguments.opts.amount" and "params.arguments.opts.Amount" differ only in case`, "7"},
	{"Kelvin sign", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_check","arguments":{"kind":1,"\u212aind":2}}}`,
		codeInvalidRequest, "differ only in case", "7"},
	{"inexact id", `{"jsonrpc":"2.0","id":1e308,"method":"tools/list"}`,
		codeInvalidRequest, "id 1e308 is not written as a plain integer", "1e308"},
	{"nested too deep", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_check","arguments":{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}}}`,
		codeInvalidRequest, "nested more than 1000 levels deep", "7"},
}

// TestEnvelopeTransportsAgree sends every refused shape over Streamable
// HTTP (both eras) and over stdio (the transport `kubepact mcp` runs on
// its standard streams): each transport answers the same JSON-RPC error,
// code, message and id, and the stdio session goes on serving.
func TestEnvelopeTransportsAgree(t *testing.T) {
	s := newTestServer(t, &Options{Transport: TransportHTTP})
	url := serveHTTP(t, s)
	sid := rawSession(t, url)
	peer := startStdio(t, s)
	peer.initialize(t)
	for _, tc := range envelopeCases {
		t.Run(tc.name, func(t *testing.T) {
			peer.send(t, tc.body)
			stdioID, stdioCode, stdioMsg, isErr := rpcError(t, peer.next(t))
			if !isErr || stdioCode != tc.code || !strings.Contains(stdioMsg, tc.msg) || string(stdioID) != tc.id {
				t.Errorf("stdio answered id %s code %d %q; want id %s code %d containing %q", stdioID, stdioCode, stdioMsg, tc.id, tc.code, tc.msg)
			}
			for _, era := range []struct{ sid, version string }{{sid, ""}, {"", statelessEra}} {
				r := rpcPost(t, url, era.sid, era.version, tc.body)
				id, code, msg, isErr := rpcError(t, r.raw)
				if r.status != http.StatusBadRequest || !isErr || code != stdioCode || msg != stdioMsg || string(id) != string(stdioID) {
					t.Errorf("HTTP %s answered %d %q; stdio answered id %s code %d %q", era.version, r.status, r.raw, stdioID, stdioCode, stdioMsg)
				}
			}
		})
	}
	peer.send(t, `{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"pacto_server_info","arguments":{}}}`)
	if id, _, msg, isErr := rpcError(t, peer.next(t)); isErr || string(id) != `"after"` {
		t.Errorf("a clean call after the refusals: id %s, error %q", id, msg)
	}
}

// TestStdioBadLinesKeepTheSession drives the built binary's standard
// streams with lines the SDK's own stdio transport ends the whole session
// on (today: the first of them kills it): each is answered with a
// JSON-RPC error saying what was wrong, and the session keeps serving.
func TestStdioBadLinesKeepTheSession(t *testing.T) {
	p := startBinary(t, "--workspace", t.TempDir(), "--max-request-bytes", "4096")
	p.initialize(t)
	for _, tc := range []struct {
		name, line string
		code       int
		msg, id    string
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method":`, codeParseError, "the line is not one JSON value", "null"},
		{"two values on a line", `{"jsonrpc":"2.0","id":1,"method":"ping"} {}`, codeParseError, "the line is not one JSON value", "null"},
		{"not JSON-RPC 2.0", `{"jsonrpc":"1.0","id":2,"method":"ping"}`, codeInvalidRequest, "not a JSON-RPC 2.0 message", "2"},
		{"neither request nor response", `{"jsonrpc":"2.0"}`, codeInvalidRequest, "not a JSON-RPC 2.0 message", "null"},
		{"a batch in the 2025-11-25 era", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, codeInvalidRequest, "JSON-RPC batches are not part of this session's protocol", "null"},
		{"longer than --max-request-bytes", `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 5000) + `"}}}`,
			codeInvalidRequest, "longer than 4096 bytes", "null"},
		{"key twice", `{"jsonrpc":"2.0","id":5,"method":"tools/list","method":"tools/call"}`, codeInvalidRequest, `key "method" appears twice`, "5"},
		{"Method beside method", `{"jsonrpc":"2.0","id":6,"method":"tools/list","Method":"tools/call"}`, codeInvalidRequest, "differ only in case", "6"},
	} {
		p.send(t, tc.line)
		id, code, msg, isErr := rpcError(t, p.next(t))
		if !isErr || code != tc.code || !strings.Contains(msg, tc.msg) || string(id) != tc.id {
			t.Errorf("%s: answered id %s code %d %q; want id %s code %d containing %q", tc.name, id, code, msg, tc.id, tc.code, tc.msg)
		}
	}
	p.send(t, `{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	if id, _, msg, isErr := rpcError(t, p.next(t)); isErr || string(id) != `"last"` {
		t.Errorf("ping after the bad lines: id %s, error %q", id, msg)
	}
}

// TestStdioBatchesInTheirEra: a 2025-03-26 session keeps JSON-RPC
// batches; one repeating an id is refused instead of ending the session.
func TestStdioBatchesInTheirEra(t *testing.T) {
	s := newTestServer(t, nil)
	p := startStdio(t, s)
	p.send(t, strings.Replace(initializeBody, "2025-11-25", "2025-03-26", 1))
	if _, _, _, isErr := rpcError(t, p.next(t)); isErr {
		t.Fatal("initialize failed")
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.send(t, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	if _, code, msg, isErr := rpcError(t, p.next(t)); !isErr || code != codeInvalidRequest || !strings.Contains(msg, "batch element 1 repeats the id") {
		t.Errorf("batch repeating an id: %d %q", code, msg)
	}
	p.send(t, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"two","method":"ping"}]`)
	var answers []json.RawMessage
	if err := json.Unmarshal([]byte(p.next(t)), &answers); err != nil || len(answers) != 2 {
		t.Errorf("batch of two pings: %v, %d answers", err, len(answers))
	}
}

// BenchmarkEnvelope prices the strict envelope's scanner beside its
// first, token-walking implementation (envelope_ref_test.go) and beside
// a plain decode of the same message (which the SDK does anyway), on a
// typical tools/call and on a 1 MiB one:
//
//	go test ./mcp -run '^$' -bench Envelope -benchmem
func BenchmarkEnvelope(b *testing.B) {
	small := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_create","arguments":{"name":"svc","version":"1.0.0",` +
		`"metadata":{"team":"a","tier":"b"},"interfaces":[{"name":"api","type":"openapi"}]}}}`)
	var meta strings.Builder
	for i := 0; meta.Len() < 1<<20; i++ {
		fmt.Fprintf(&meta, `"Key%d":{"v":[%d,"x"]},`, i, i)
	}
	large := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pacto_create","arguments":{"name":"svc","metadata":{` +
		strings.TrimSuffix(meta.String(), ",") + `}}}}`)
	for _, in := range []struct {
		name string
		raw  []byte
	}{{"small", small}, {"1MiB", large}} {
		b.Run("envelope/"+in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.raw)))
			b.ReportAllocs()
			for b.Loop() {
				if refused, valid := checkEnvelope(in.raw); refused != nil || !valid {
					b.Fatal(refused)
				}
			}
		})
		b.Run("tokens/"+in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.raw)))
			b.ReportAllocs()
			for b.Loop() {
				if refused, valid := refCheckEnvelope(in.raw); refused != nil || !valid {
					b.Fatal(refused)
				}
			}
		})
		b.Run("decode/"+in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.raw)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(in.raw, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStdioRoundTrip prices the stdio filter: one tools/call from a
// go-sdk client over pipes, through the transport `kubepact mcp` serves
// (the filter in front of the SDK's) and through the SDK's alone:
//
//	go test ./mcp -run '^$' -bench StdioRoundTrip -benchmem
func BenchmarkStdioRoundTrip(b *testing.B) {
	s := newTestServer(b, nil)
	addTestTool(b, s, echoTool(b))
	for _, tc := range []struct {
		name  string
		serve func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error
	}{
		{"kubepact", func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
			return s.serveStdio(ctx, in, out)
		}},
		{"sdk-alone", func(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
			return s.sdk.Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(b.Context())
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan struct{})
			go func() { _ = tc.serve(ctx, inR, outW); _ = outW.Close(); close(done) }()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				b.Fatal(err)
			}
			params := &sdk.CallToolParams{Name: "pacto_test_echo", Arguments: map[string]any{"name": "bench"}}
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
			b.StopTimer()
			_ = cs.Close()
			cancel()
			<-done
		})
	}
}
