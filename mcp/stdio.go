package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// batchesEndAt is the first protocol version without JSON-RPC batches.
const batchesEndAt = "2025-06-18"

// serveStdio serves one MCP session over in and out until in ends or ctx
// is done.
func (s *Server) serveStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return s.sdk.Run(ctx, &stdioTransport{in: in, out: out, maxBytes: s.opts.MaxRequestBytes, log: s.log.WithName("stdio")})
}

// stdioTransport is MCP's stdio transport: newline-delimited JSON-RPC
// over two streams, one message per line, served by the SDK's own
// transport behind a filter that reads every line first. The filter
// applies the strict envelope (checkEnvelope, exactly as the HTTP
// transport does) and refuses, with a JSON-RPC error on out and without
// ending the session, what the SDK would otherwise end the whole
// session on: a line that is not JSON, a message that is not JSON-RPC
// 2.0, a line longer than maxBytes, a batch where the protocol has none.
// Only lines that pass reach the SDK.
type stdioTransport struct {
	in       io.Reader
	out      io.Writer
	maxBytes int64
	log      logr.Logger
}

// Connect starts the filter and returns the SDK's connection over it.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	out := &lockedWriter{w: t.out}
	pr, pw := io.Pipe()
	f := &stdioFilter{out: out, max: t.maxBytes, log: t.log}
	go f.run(t.in, pw)
	inner := &sdk.IOTransport{Reader: pr, Writer: nopWriteCloser{out}, MaxLineLength: int(t.maxBytes) + 64}
	return inner.Connect(ctx)
}

// stdioFilter reads the client's lines and hands the SDK those that pass.
type stdioFilter struct {
	out *lockedWriter
	max int64
	log logr.Logger
	// batches says whether the session's protocol has JSON-RPC batches:
	// only when its initialize asked for a version before batchesEndAt
	// that the SDK speaks (the version it then negotiates).
	batches bool
}

// run filters in into pw until in ends (or fails) or the SDK stops
// reading.
func (f *stdioFilter) run(in io.Reader, pw *io.PipeWriter) {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(br, f.max)
		if tooLong {
			f.answer(nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: the message is longer than %d bytes (the request size limit, --max-request-bytes) and was not read; send smaller messages, one per line", f.max))
		} else if len(line) > 0 {
			if pass := f.check(line); pass != nil {
				if _, werr := pw.Write(pass); werr != nil {
					return // the SDK has closed the connection
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			_ = pw.CloseWithError(err)
			return
		}
	}
}

// readLine returns the next line without its end, or reports a line
// longer than max, read to its end and dropped. err is what ended the
// input, with the line read before it.
func readLine(br *bufio.Reader, max int64) (line []byte, tooLong bool, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		if !tooLong {
			if int64(len(line)+len(chunk)) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(rerr, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, tooLong, rerr
	}
}

// check returns the line (newline-terminated) for the SDK, or answers
// the client and returns nil.
func (f *stdioFilter) check(line []byte) []byte {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	c := inspectEnvelope(line)
	switch {
	case c.refused != nil:
		f.answer(c.refused.id, c.refused.code, c.refused.msg)
		return nil
	case !c.valid:
		f.answer(nil, codeParseError, "Parse error: the line is not one JSON value; send each JSON-RPC message as JSON on a line of its own")
		return nil
	case c.plainRequest && c.badParams == nil:
		return append(line, '\n') // decodable as it is: no second decode
	}
	if !c.plainRequest {
		if reason := f.decodable(line); reason != "" {
			f.answer(requestID(line), codeInvalidRequest, "Invalid Request: "+reason)
			return nil
		}
	}
	if c.badParams != nil {
		f.answer(c.badParams.id, c.badParams.code, c.badParams.msg)
		return nil
	}
	return append(line, '\n')
}

// notJSONRPC says what a JSON-RPC 2.0 message is.
const notJSONRPC = `not a JSON-RPC 2.0 message: want an object with "jsonrpc": "2.0" and a "method" (a request or a notification), or an "id" with a "result" or an "error" (a response)`

// decodable says why the SDK's transport would end the session on line,
// a valid JSON value the envelope accepts, or "".
func (f *stdioFilter) decodable(line []byte) string {
	if line[0] != '[' {
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			return notJSONRPC
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" {
			f.noteInitialize(req.Params)
		}
		return ""
	}
	if !f.batches {
		return "JSON-RPC batches are not part of this session's protocol (none from " + batchesEndAt + " on): send one message per line"
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
		return "a batch must hold at least one message"
	}
	ids := map[jsonrpc.ID]bool{}
	for i, raw := range elems {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return fmt.Sprintf("batch element %d: %s", i, notJSONRPC)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			if ids[req.ID] {
				return fmt.Sprintf("batch element %d repeats the id of an earlier one: each request of a batch needs its own id", i)
			}
			ids[req.ID] = true
		}
	}
	return ""
}

// noteInitialize records whether the protocol the client asks for (and
// so the one negotiated) has batches.
func (f *stdioFilter) noteInitialize(params json.RawMessage) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	f.batches = p.ProtocolVersion < batchesEndAt && slices.Contains(sdk.SupportedProtocolVersions(), p.ProtocolVersion)
}

// answer writes a JSON-RPC error to the client.
func (f *stdioFilter) answer(id json.RawMessage, code int, msg string) {
	f.log.V(1).Info("Refused a stdio message", "code", code, "reason", msg)
	_, _ = f.out.Write(errorMessage(id, code, msg))
}

// lockedWriter serialises whole writes: the SDK writes each message in
// one Write, and so does the filter.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
