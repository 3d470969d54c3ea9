package invoke

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kubepact/kubepact/internal/grpctools"
	httpinvoke "github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// Result is a call's outcome as a tool returns it.
type Result struct {
	// Code is the gRPC status code name: OK, NOT_FOUND, …
	Code string `json:"code" jsonschema:"the gRPC status code name: OK, NOT_FOUND, DEADLINE_EXCEEDED, …"`
	// Response is a unary call's response message as proto3 JSON.
	Response json.RawMessage `json:"response,omitempty"`
	// Messages are a server-streaming call's messages, in order.
	Messages []json.RawMessage `json:"messages,omitempty"`
	// Truncated: the stream had more messages than the bounds keep, or a
	// unary response was larger than MaxResponseBytes (Response is then
	// left out).
	Truncated bool `json:"truncated,omitempty"`
	// Status is set when Code is not OK: the status message and details.
	// (Not "error": that member is the MCP error envelope's.)
	Status *StatusError `json:"status,omitempty"`
}

// StatusError is a non-OK status as the service sent it (or, for what
// went wrong before an answer arrived, in this package's words).
type StatusError struct {
	Message string `json:"message"`
	// Details are the google.rpc.Status details, each as JSON with its
	// @type; a detail whose type is unknown is {"@type": …, "value": base64}.
	Details []json.RawMessage `json:"details,omitempty"`
}

// IsError reports whether the call did not succeed.
func (r *Result) IsError() bool { return r.Code != "OK" }

// Client calls the target of one Capability over one connection. It is
// safe for concurrent use.
type Client struct {
	target string
	opts   *grpctools.Options
	tls    *tls.Config // nil: plaintext HTTP/2 (h2c)
	once   sync.Once
	conn   *grpc.ClientConn
	err    error
}

// NewClient returns a client for c's target; the connection is made on
// the first call. Close releases it.
func NewClient(c *grpctools.Capability) *Client {
	o := &grpctools.Options{}
	if len(c.Tools) > 0 {
		o = c.Tools[0].Options()
	}
	return &Client{target: o.Target, opts: o, tls: c.TLSConfig()}
}

// Close closes the connection, if one was made.
func (cl *Client) Close() error {
	if cl.conn != nil {
		return cl.conn.Close()
	}
	return nil
}

func (cl *Client) connection() (*grpc.ClientConn, error) {
	cl.once.Do(func() {
		if cl.target == "" {
			cl.err = errors.New("no gRPC target is configured: give the service's host:port (kubepact mcp --grpc-target, or the sidecar's upstream port)")
			return
		}
		n := cl.opts.MaxMessageBytes
		// passthrough: the target is host:port as given, never a DNS name
		// the resolver expands into other addresses.
		creds := insecure.NewCredentials()
		if cl.tls != nil {
			creds = credentials.NewTLS(cl.tls)
		}
		cl.conn, cl.err = grpc.NewClient("passthrough:///"+cl.target,
			grpc.WithTransportCredentials(creds),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(n), grpc.MaxCallSendMsgSize(n)),
			grpc.WithUserAgent("kubepact"),
		)
		if cl.err != nil {
			cl.err = fmt.Errorf("the gRPC target %s is not usable: %w", cl.target, cl.err)
		}
	})
	return cl.conn, cl.err
}

// Call decodes args into t's request and calls t's RPC. A request that
// does not decode is a *grpctools.RequestError; a call that needs
// confirmation and gets none is an error and sends nothing; every answer
// of the service, OK or not, is a Result.
func (cl *Client) Call(ctx context.Context, t *grpctools.Tool, args json.RawMessage) (*Result, error) {
	req, err := t.Encode(args)
	if err != nil {
		return nil, err
	}
	conn, err := cl.connection()
	if err != nil {
		return nil, err
	}
	if err := confirm(ctx, cl.url(), t, req); err != nil {
		return nil, err
	}
	o := t.Options()
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	for _, p := range t.Metadata() {
		ctx = metadata.AppendToOutgoingContext(ctx, p.Name, p.Value)
	}
	if t.ServerStreaming {
		return cl.stream(ctx, conn, t, req)
	}
	resp := dynamicpb.NewMessage(t.Method().Output())
	if err := conn.Invoke(ctx, t.RPC, req, resp); err != nil {
		return cl.failure(ctx, t, err), nil
	}
	js, err := grpctools.EncodeJSON(resp, t.Types())
	if err != nil {
		return nil, err
	}
	if len(js) > o.MaxResponseBytes {
		return &Result{Code: "OK", Truncated: true}, nil
	}
	return &Result{Code: "OK", Response: js}, nil
}

// stream collects a server-streaming call's messages up to
// MaxStreamMessages and MaxResponseBytes of JSON.
func (cl *Client) stream(ctx context.Context, conn *grpc.ClientConn, t *grpctools.Tool, req proto.Message) (*Result, error) {
	o := t.Options()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the stream when the bound is reached
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, t.RPC)
	if err != nil {
		return cl.failure(ctx, t, err), nil
	}
	if err := s.SendMsg(req); err != nil && !errors.Is(err, io.EOF) {
		return cl.failure(ctx, t, err), nil
	}
	if err := s.CloseSend(); err != nil {
		return cl.failure(ctx, t, err), nil
	}
	res := &Result{Code: "OK", Messages: []json.RawMessage{}}
	size := 0
	for {
		m := dynamicpb.NewMessage(t.Method().Output())
		err := s.RecvMsg(m)
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			f := cl.failure(ctx, t, err)
			f.Messages, f.Truncated = res.Messages, false
			return f, nil
		}
		if len(res.Messages) == o.MaxStreamMessages {
			res.Truncated = true
			return res, nil
		}
		js, err := grpctools.EncodeJSON(m, t.Types())
		if err != nil {
			return nil, err
		}
		if size+len(js) > o.MaxResponseBytes {
			res.Truncated = true
			return res, nil
		}
		size += len(js)
		res.Messages = append(res.Messages, js)
	}
}

// url names the target in a confirmation: grpc://host:port, grpcs://
// over TLS.
func (cl *Client) url() string {
	if cl.tls != nil {
		return "grpcs://" + cl.target
	}
	return "grpc://" + cl.target
}

// handshakeFailure says in words why the TLS handshake with the target
// failed: the certificate's issuer, the name it holds, or a peer that
// does not speak TLS.
func (cl *Client) handshakeFailure(msg string) string {
	head := fmt.Sprintf("the TLS handshake with the service at %s failed, so nothing was sent: ", cl.target)
	_, why, _ := strings.Cut(msg, "authentication handshake failed: ")
	why = strings.TrimSuffix(strings.TrimSpace(why), `"`)
	switch {
	case strings.Contains(why, "unknown authority"):
		return head + "its certificate is not signed by a CA this client trusts (CAFile, default the system's roots); give the CA that issued it"
	case strings.Contains(why, "certificate is valid for"), strings.Contains(why, "not valid for any names"):
		return head + fmt.Sprintf("its certificate does not hold the name %s (ServerName, default the target's host): %s", cl.tls.ServerName, why)
	case strings.Contains(why, "first record does not look like a TLS handshake"):
		return head + "it does not speak TLS there (plaintext HTTP/2?); reach it without TLS only on loopback"
	case strings.Contains(why, "expired"), strings.Contains(why, "not yet valid"):
		return head + "its certificate is outside its validity period: " + why
	}
	return head + why
}

// failure maps a call's error to a Result: the service's own status as
// it sent it, or, for what happened before an answer, this package's
// words instead of the transport's.
func (cl *Client) failure(ctx context.Context, t *grpctools.Tool, err error) *Result {
	st, _ := status.FromError(err)
	code := st.Code()
	msg := st.Message()
	o := t.Options()
	switch {
	case code == codes.DeadlineExceeded && ctx.Err() != nil:
		msg = fmt.Sprintf("the service at %s did not answer within %s (the call's deadline, Timeout)", cl.target, o.Timeout)
	case code == codes.Unavailable && strings.Contains(msg, "authentication handshake failed"):
		msg = cl.handshakeFailure(msg)
	case code == codes.Unavailable && cl.tls == nil && strings.Contains(msg, "error reading server preface"):
		msg = fmt.Sprintf("the service at %s closed the connection before speaking HTTP/2: if it serves gRPC over TLS, reach it with TLS", cl.target)
	case code == codes.Unavailable && (strings.Contains(msg, "connection refused") || strings.Contains(msg, "connection error")):
		msg = fmt.Sprintf("the service at %s is not answering: nothing accepts gRPC connections there; start the service, or point the gRPC target at where it runs", cl.target)
	case code == codes.Unavailable && strings.Contains(msg, "transport"):
		msg = fmt.Sprintf("the exchange with the service at %s failed before an answer arrived (the connection broke); see the service's log", cl.target)
	case code == codes.ResourceExhausted && strings.Contains(msg, "received message larger than max"):
		msg = fmt.Sprintf("the service's response is larger than %d bytes (MaxMessageBytes); ask for less", o.MaxMessageBytes)
	case code == codes.ResourceExhausted && strings.Contains(msg, "trying to send message larger than max"):
		msg = fmt.Sprintf("the request is larger than %d bytes (MaxMessageBytes)", o.MaxMessageBytes)
	case code == codes.Internal && strings.Contains(msg, "grpc: failed to unmarshal"):
		msg = fmt.Sprintf("the service's response is not a %s message as the bundle's .proto describes it; the bundle and the service disagree", t.Method().Output().FullName())
	case code == codes.Unimplemented && (strings.HasPrefix(msg, "unknown service") || strings.HasPrefix(msg, "unknown method")):
		msg = fmt.Sprintf("the service at %s does not implement %s, which the bundle declares; the bundle and the service disagree", cl.target, t.RPC)
	case ctx.Err() != nil && code == codes.Canceled:
		msg = "the call was cancelled before the service answered"
	}
	res := &Result{Code: codeName(code), Status: &StatusError{Message: msg}}
	for _, d := range st.Proto().GetDetails() {
		js, err := protojson.MarshalOptions{Resolver: t.Types()}.Marshal(d)
		if err != nil {
			js, _ = json.Marshal(map[string]any{"@type": d.GetTypeUrl(), "value": d.GetValue()})
		}
		res.Status.Details = append(res.Status.Details, compact(js))
	}
	return res
}

func compact(js []byte) json.RawMessage {
	var v any
	if json.Unmarshal(js, &v) != nil {
		return js
	}
	out, _ := json.Marshal(v)
	return out
}

// codeNames are the status codes' names as google.rpc.Code spells them.
var codeNames = map[codes.Code]string{
	codes.OK: "OK", codes.Canceled: "CANCELLED", codes.Unknown: "UNKNOWN", codes.InvalidArgument: "INVALID_ARGUMENT",
	codes.DeadlineExceeded: "DEADLINE_EXCEEDED", codes.NotFound: "NOT_FOUND", codes.AlreadyExists: "ALREADY_EXISTS",
	codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED",
	codes.FailedPrecondition: "FAILED_PRECONDITION", codes.Aborted: "ABORTED", codes.OutOfRange: "OUT_OF_RANGE",
	codes.Unimplemented: "UNIMPLEMENTED", codes.Internal: "INTERNAL", codes.Unavailable: "UNAVAILABLE",
	codes.DataLoss: "DATA_LOSS", codes.Unauthenticated: "UNAUTHENTICATED",
}

func codeName(c codes.Code) string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("CODE_%d", uint32(c))
}

// confirm asks the context's Confirmer (package openapitools/invoke's)
// about the call when t needs confirmation; without one it is refused.
func confirm(ctx context.Context, base string, t *grpctools.Tool, req proto.Message) error {
	if !t.NeedsConfirmation() {
		return nil
	}
	body, err := grpctools.EncodeJSON(req, t.Types())
	if err != nil {
		return err
	}
	h := http.Header{"Content-Type": {"application/grpc"}}
	for _, p := range t.Metadata() {
		h.Add(p.Name, "(configured)") // credentials are never shown
	}
	return httpinvoke.Confirm(ctx, &httpinvoke.PendingCall{
		Tool:   t.Name,
		Method: http.MethodPost,
		URL:    base + t.RPC,
		Target: t.RPC,
		Header: h,
		Body:   body,
	})
}
