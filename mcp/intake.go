package mcp

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/traces"
)

// TraceIntakeEndpoint is the OTLP/HTTP trace path (the OTLP default).
const TraceIntakeEndpoint = "/v1/traces"

// TraceIntake is a bounded OTLP/HTTP trace receiver beside /mcp: a
// cluster's collector (or any OTLP/HTTP exporter) POSTs trace exports,
// protobuf or JSON, and the edges they show feed the fleet's next
// snapshot. It sits behind /mcp's checks (Host, Origin, the bearer token)
// and, when Authorizer is set, asks it whether the caller may post.
type TraceIntake struct {
	// Accumulator holds the observed edges; its limits bound each export.
	Accumulator *traces.Accumulator
	// Builder receives the set after every accepted export.
	Builder *fleetgraph.Builder
	// Authorizer decides whether an authenticated caller may post; nil
	// lets every authenticated caller (the static token's one caller, or
	// anyone with --mcp-auth none) post.
	Authorizer IntakeAuthorizer
	// MaxConcurrent bounds the exports read at once (default 2); past it
	// a caller is answered 503 with Retry-After.
	MaxConcurrent int
}

// IntakeAuthorizer decides whether id may post traces.
type IntakeAuthorizer interface {
	// MayPostTraces reports whether id may post trace exports; an error
	// means it could not be decided now (the caller is answered 503).
	MayPostTraces(ctx context.Context, id Identity) (bool, error)
}

// intakeHandler serves TraceIntakeEndpoint.
func (s *Server) intakeHandler(in *TraceIntake) http.Handler {
	n := in.MaxConcurrent
	if n <= 0 {
		n = 2
	}
	sem := make(chan struct{}, n)
	log := s.log.WithName("trace-intake")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "Method Not Allowed: POST an OTLP trace export", http.StatusMethodNotAllowed)
			return
		}
		if in.Authorizer != nil {
			id, _ := identityOf(r.Context())
			ok, err := in.Authorizer.MayPostTraces(r.Context(), id)
			switch {
			case err != nil:
				log.Error(err, "Could not decide whether a caller may post traces", "user", id.User)
				w.Header().Set("Retry-After", "5")
				http.Error(w, "Service Unavailable: whether you may post traces could not be decided now; retry", http.StatusServiceUnavailable)
				return
			case !ok:
				log.Info("Refused a trace export: the caller may not post traces", "user", id.User)
				http.Error(w, "Forbidden: posting traces needs permission to create servicecontracts/traces (API group kubepact.dev) cluster-wide", http.StatusForbidden)
				return
			}
		}
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		read := in.Accumulator.ReadProto
		switch ct {
		case "application/x-protobuf":
		case "application/json":
			read = in.Accumulator.ReadJSON
		default:
			http.Error(w, "Unsupported Media Type: send application/x-protobuf (OTLP/HTTP's default) or application/json (OTLP/JSON)", http.StatusUnsupportedMediaType)
			return
		}
		limit := in.Accumulator.Limits().MaxExportBytes
		if r.ContentLength > limit {
			http.Error(w, fmt.Sprintf("Request Entity Too Large: an export may be at most %d bytes; send smaller batches", limit), http.StatusRequestEntityTooLarge)
			return
		}
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Service Unavailable: as many exports are being read as the intake allows; retry", http.StatusServiceUnavailable)
			return
		}
		var body io.Reader = http.MaxBytesReader(w, r.Body, limit+1)
		switch strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))) {
		case "", "identity":
		case "gzip":
			zr, err := gzip.NewReader(body)
			if err != nil {
				http.Error(w, "Bad Request: Content-Encoding says gzip but the body is not gzip", http.StatusBadRequest)
				return
			}
			defer zr.Close()
			body = zr // the accumulator bounds what it inflates to
		default:
			http.Error(w, "Unsupported Media Type: Content-Encoding may be gzip or none", http.StatusUnsupportedMediaType)
			return
		}
		sum, err := read(body)
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe) || errors.Is(err, traces.ErrTooLarge):
			log.Info("Refused a trace export: too large", "error", err.Error())
			http.Error(w, "Request Entity Too Large: "+tooLargeText(err, limit), http.StatusRequestEntityTooLarge)
			return
		case errors.Is(err, traces.ErrMalformed):
			log.Info("Refused a trace export: malformed", "error", err.Error())
			http.Error(w, "Bad Request: "+err.Error(), http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, "Bad Request: the export could not be read in full", http.StatusBadRequest)
			return
		}
		if sum.Calls > 0 {
			in.Builder.SetObserved(in.Accumulator.Observed())
		}
		log.V(1).Info("Trace export read", "spans", sum.Spans, "calls", sum.Calls, "pending", sum.Pending, "skipped", sum.Skipped)
		// An empty ExportTraceServiceResponse: full success.
		if ct == "application/json" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, "{}")
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
}

func tooLargeText(err error, limit int64) string {
	if errors.Is(err, traces.ErrTooLarge) {
		return err.Error()
	}
	return fmt.Sprintf("an export may be at most %d bytes; send smaller batches", limit)
}

// identityOf is the identity authenticate stored in ctx.
func identityOf(ctx context.Context) (Identity, bool) {
	info, ok := ctx.Value(identityKey{}).(*auth.TokenInfo)
	if !ok || info == nil {
		return Identity{}, false
	}
	id, ok := info.Extra[identityExtra].(Identity)
	return id, ok
}
