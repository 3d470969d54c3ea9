package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kubepact/kubepact/internal/netx"
)

// Endpoint is the MCP endpoint; with Options.Metrics, MetricsEndpoint is
// served beside it. Every other path is 404.
const Endpoint = "/mcp"

// MetricsEndpoint serves Options.Metrics in the Prometheus text format,
// behind the same Host and Origin checks and authentication as Endpoint:
// the series name the tools called and how often, which is the caller's
// business.
const MetricsEndpoint = "/metrics"

// statelessEra is the first protocol version without sessions. The SDK
// speaks it only on a stateless handler, and older versions only on a
// stateful one (for sessions), so each request is routed on the
// Mcp-Protocol-Version header that every request of the new era carries.
// Requests without it (initialize, or 2025-era session traffic) are
// stateful.
const statelessEra = "2026-07-28"

func (s *Server) newHTTPHandler() http.Handler {
	getServer := func(*http.Request) *sdk.Server { return s.sdk }
	sdkLog := sdkLogger(s.log.WithName("http"))
	// The SDK's own localhost protection is off because guard does the same
	// check and more: it also honours AllowedHosts, and it also applies when
	// the listener is not on loopback. Its idle timer is off too: the
	// session table expires, bounds and closes sessions.
	stateful := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{
		MaxRequestBodyBytes:        s.opts.MaxRequestBytes,
		Logger:                     sdkLog,
		DisableLocalhostProtection: true,
	})
	// A stateless request lives as long as its POST: a client that
	// cancels it (or goes away) cancels the call's ctx, so its work stops.
	// Its answer is one application/json body, not an event stream: in
	// this era nothing reaches the client during a call (a confirmation
	// is an input-required result the client answers by retrying, and no
	// tool sends progress or log notifications), so the stream would only
	// frame the one response. subscriptions/listen, a stream by nature,
	// stays one (the SDK keeps it SSE whatever this says).
	stateless := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{
		Stateless:                    true,
		JSONResponse:                 true,
		MaxRequestBodyBytes:          s.opts.MaxRequestBytes,
		Logger:                       sdkLog,
		DisableLocalhostProtection:   true,
		PropagateRequestCancellation: true,
	})
	s.sessions = newSessionTable(s.opts.MaxSessions, min(s.opts.MaxSessionsPerIdentity, s.opts.MaxSessions), s.opts.SessionTimeout, func(ctx context.Context, id string) {
		r, _ := http.NewRequestWithContext(ctx, http.MethodDelete, Endpoint, nil)
		r.Header.Set(sessionHeader, id)
		stateful.ServeHTTP(&discardWriter{}, r)
	})
	s.sdk.AddReceivingMiddleware(s.sessions.trackInitialize)
	s.reqBytes = newRequestBytes(requestBytesBound(&s.opts), s.opts.MaxRequestBytes)
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A stream stays open as long as the client likes: a GET, or a POST
		// of subscriptions/listen (the 2026-07-28 era's GET stream).
		stream := r.Method == http.MethodGet
		owner := sessionOwnerOf(r)
		r.Header.Set(callerHeader, owner) // over any the client sent
		if !s.rates.admitRequest(w, owner) {
			return
		}
		if r.Method == http.MethodPost {
			release, ok := s.holdRequestBytes(w, r, owner)
			if !ok {
				return
			}
			defer release()
			body, c, err := readEnvelope(w, r, s.opts.MaxRequestBytes)
			if limit, tooLarge := bodyTooLarge(err); tooLarge {
				writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, tooLongMessage(limit))
				return
			}
			if err != nil {
				// The client stopped sending, or took longer than
				// --read-timeout; it may not be there to read this.
				http.Error(w, "Bad Request: the request body ended before its Content-Length, or took longer than the server waits for it (--read-timeout); send the whole body at once", http.StatusBadRequest)
				return
			}
			if c.refused == nil {
				c.refused = checkStandardHeaders(r.Header, c)
			}
			if c.refused != nil {
				writeRPCError(w, http.StatusBadRequest, c.refused.id, c.refused.code, c.refused.msg)
				return
			}
			stream = c.stream
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		// The whole request has been read: from here the connection is
		// working for a client and is not given to another. Except for a
		// stream: open as long as the client likes, it stays among the
		// connections a new one may take the slot of (the client may open
		// it again), so streams alone cannot fill every slot.
		if !stream {
			markServing(r)
		}
		// A call's response must reach the client in full, so shutdown
		// waits for it; a stream only ends when its session is closed, or
		// its connection at the end of the shutdown.
		if !stream {
			if !s.gate.enter() {
				writeRPCError(w, http.StatusServiceUnavailable, nil, codeUnavailable, "the server is shutting down; retry against another instance")
				return
			}
			defer s.gate.leave()
		} else if s.gate.closed() {
			http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get(protocolVersionHeader) >= statelessEra {
			stateless.ServeHTTP(w, r)
			return
		}
		s.sessions.serve(w, r, stateful, stream)
	})
	mux := http.NewServeMux()
	var inner http.Handler = route
	if s.opts.Authenticator != nil {
		inner = withTokenInfo(route)
	}
	mux.Handle(Endpoint, s.guard(inner))
	if p := s.opts.ProtectedResource; p != nil {
		meta := p.metadataHandler()
		mux.Handle(ProtectedResourceMetadataPath, s.guardHost(meta))
		mux.Handle(ProtectedResourceMetadataPath+Endpoint, s.guardHost(meta))
	}
	if s.opts.Metrics != nil {
		mux.Handle(MetricsEndpoint, s.guard(promhttp.HandlerFor(s.opts.Metrics, promhttp.HandlerOpts{})))
	}
	if in := s.opts.TraceIntake; in != nil && in.Accumulator != nil && in.Builder != nil {
		mux.Handle(TraceIntakeEndpoint, s.guard(s.intakeHandler(in)))
	}
	return unambiguousFraming(mux)
}

// tooLongMessage is the answer to a body over limit (MaxRequestBytes),
// whether its Content-Length said so or its reading found it.
func tooLongMessage(limit int64) string {
	return fmt.Sprintf("Invalid Request: the request body is longer than %d bytes (the request size limit, --max-request-bytes) and was not read; send smaller messages", limit)
}

// holdRequestBytes takes a POST's Content-Length from the request bytes
// in flight (see requestBytes) before its body is read, or answers: 413
// for a body larger than MaxRequestBytes, 429 or 503 when the caller's
// share or the whole bound is held. The body is then never read. owner is
// sessionOwnerOf(r), which the caller has already made.
func (s *Server) holdRequestBytes(w http.ResponseWriter, r *http.Request, owner string) (release func(), ok bool) {
	n := r.ContentLength
	switch {
	case n > s.opts.MaxRequestBytes:
		w.Header().Set("Connection", "close")
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest, tooLongMessage(s.opts.MaxRequestBytes))
		return nil, false
	case n < 0: // not said: as much as a request may be
		n = s.opts.MaxRequestBytes
	}
	release, err := s.reqBytes.take(owner, n)
	switch {
	case errors.Is(err, errCallerBytesFull):
		w.Header().Set("Retry-After", "1")
		writeRPCError(w, http.StatusTooManyRequests, nil, codeUnavailable, fmt.Sprintf(
			"your requests in progress hold as many request bytes as one caller may (%s, an eighth of --max-request-bytes-in-flight); send this one once an earlier one has been answered", mib(s.reqBytes.perCaller)))
		return nil, false
	case err != nil:
		w.Header().Set("Retry-After", "1")
		writeRPCError(w, http.StatusServiceUnavailable, nil, codeUnavailable, fmt.Sprintf(
			"the server is reading or answering as many request bytes as it allows (%s, --max-request-bytes-in-flight); retry shortly", mib(s.reqBytes.max)))
		return nil, false
	}
	return release, true
}

// unambiguousFraming closes the request-smuggling gap Go's HTTP/1 server
// leaves. Given both Transfer-Encoding: chunked and Content-Length, it
// reads the body as chunked and drops the Content-Length before any
// handler runs, keeping the connection open: a proxy in front that
// framed the body by its Content-Length would then see the rest as
// another request. As the two cannot be told apart here, every request
// with a Transfer-Encoding is refused, 400, and its connection closed
// (MCP clients send a Content-Length). An HTTP/1.0 request, whose
// Transfer-Encoding the server drops unseen, is answered and its
// connection closed, so nothing after it on the connection is read.
// Every other framing (several Content-Length values, an unknown
// Transfer-Encoding) the server refuses itself.
func unambiguousFraming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
			http.Error(w, "Bad Request: Transfer-Encoding is not accepted; send the body with a Content-Length only "+
				"(Transfer-Encoding beside Content-Length is a request-smuggling shape); the connection is closed", http.StatusBadRequest)
			return
		}
		if !r.ProtoAtLeast(1, 1) {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// guard rejects DNS-rebinding and cross-origin requests (403) and, with
// authentication configured, unauthenticated ones (401), before the MCP
// handler sees them.
func (s *Server) guard(next http.Handler) http.Handler {
	if s.opts.Authenticator == nil {
		return s.guardHost(next)
	}
	return s.guardHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r, ok := s.authenticate(w, r)
		if !ok {
			return
		}
		next.ServeHTTP(w, r)
	}))
}

// guardHost rejects DNS-rebinding and cross-origin requests (403): the
// part of guard that also protects what anyone may read (the
// protected-resource metadata).
func (s *Server) guardHost(next http.Handler) http.Handler {
	allowedHosts := map[string]bool{}
	for _, h := range s.opts.AllowedHosts {
		allowedHosts[strings.ToLower(strings.TrimSpace(h))] = true
	}
	if ip := net.ParseIP(s.opts.Listen); ip != nil && !ip.IsUnspecified() {
		allowedHosts[ip.String()] = true // clients may dial the listen address itself
	}
	hostOK := func(host string) bool {
		host = strings.ToLower(strings.TrimSuffix(host, "."))
		return netx.IsLoopbackHost(host) || allowedHosts[host]
	}
	allowedOrigins := map[string]bool{}
	for _, o := range s.opts.AllowedOrigins {
		allowedOrigins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostOK(hostname(r.Host)) {
			http.Error(w, "Forbidden: Host not allowed", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originOK(origin, hostOK, allowedOrigins) {
			http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originOK accepts an http(s) origin whose host passes the Host rules, or
// one listed exactly.
func originOK(origin string, hostOK func(string) bool, listed map[string]bool) bool {
	if listed[strings.ToLower(origin)] {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return hostOK(u.Hostname())
}

// hostname strips the port (and IPv6 brackets) from a Host header value.
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// Serve serves the HTTP transport on ln until ctx is done, then shuts down
// in order, within DrainTimeout however many sessions are open: it stops
// accepting and refuses new requests (503, a JSON-RPC error), lets every
// call in progress write its full response, closes the sessions (which
// ends their streams), and then closes whatever connection remains. The
// listener hands out at most MaxConnections connections, and every
// connection is bounded by the read, header and idle timeouts.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	url := "http://" + ln.Addr().String() + Endpoint
	s.servedURL.Store(&url)
	host := hostname(ln.Addr().String())
	if !netx.IsLoopbackHost(host) && s.opts.Authenticator == nil {
		s.log.Info("WARNING: serving MCP beyond loopback without authentication; anyone who can reach this address can call every tool", "url", url)
	}
	lim := newConnLimiter(ln, s.opts.MaxConnections)
	srv := &http.Server{
		Handler:           s.closingWhenDelayed(s.httpHandler),
		ReadHeaderTimeout: s.opts.ReadHeaderTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         lim.connState,
		ConnContext:       withConn,
		ErrorLog:          slog.NewLogLogger(logr.ToSlogHandler(s.log.WithName("http")), slog.LevelError),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	s.log.Info("Serving MCP over Streamable HTTP", "url", url, "tools", s.ToolNames(), "readOnly", s.opts.ReadOnly,
		"authentication", s.opts.Authenticator != nil, "scoped", s.opts.Scoper != nil, "workspace", s.opts.Workspace,
		"maxSessions", s.opts.MaxSessions, "maxSessionsPerIdentity", min(s.opts.MaxSessionsPerIdentity, s.opts.MaxSessions), "maxConnections", s.opts.MaxConnections,
		"maxRequestBytes", s.opts.MaxRequestBytes, "maxRequestBytesInFlight", s.reqBytes.max)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lim) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}

	if d := s.opts.DrainDelay; d > 0 {
		// Still serving, each answer closing its connection: kept-alive
		// clients move on while the endpoints drop this replica.
		s.delaying.Store(true)
		s.log.Info("Serving MCP over HTTP for the drain delay, closing each connection after its answer", "delay", d)
		select {
		case err := <-served:
			return err
		case <-time.After(d):
		}
	}
	start := time.Now()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.DrainTimeout)
	defer cancel()
	idle := s.gate.close()
	s.log.Info("Draining MCP over HTTP", "inflight", s.gate.count(), "sessions", s.sessions.len(), "timeout", s.opts.DrainTimeout)
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(dctx) }() // stops accepting, closes idle connections
	drained := true
	select {
	case <-idle:
	case <-dctx.Done():
		drained = false
	}
	closed := make(chan struct{})
	go func() { s.sessions.closeAll(dctx); close(closed) }()
	select {
	case <-closed:
	case <-dctx.Done():
		drained = false
	}
	// Every handler has returned and every session is closed, but net/http
	// ends a response (its last chunk) after its handler returns: wait for
	// each connection that was serving to be idle or closed, so that no
	// answer is cut short. What remains is connections still sending a
	// request that would be refused.
	select {
	case <-lim.quieted():
	case <-dctx.Done():
		drained = false
	}
	_ = srv.Close()
	if err := <-shut; err != nil {
		s.log.V(1).Info("HTTP shutdown cut short", "reason", err.Error())
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	s.log.Info("Stopped MCP over HTTP", "drained", drained, "unfinished", s.gate.count(), "ms", time.Since(start).Milliseconds(),
		"evictedConnections", lim.evicted.Load(), "refusedConnections", lim.refused.Load(),
		"evictedSessions", s.sessions.evicted.Load(), "refusedSessions", s.sessions.refused.Load(), "refusedOverQuota", s.sessions.refusedOwner.Load(),
		"refusedRequestBytes", s.reqBytes.refused.Load(), "refusedCallerRequestBytes", s.reqBytes.refusedCaller.Load())
	return nil
}

// closingWhenDelayed answers with Connection: close during the drain
// delay, so that the server closes each connection after its answer.
func (s *Server) closingWhenDelayed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.delaying.Load() {
			w = &closingWriter{ResponseWriter: w}
		}
		next.ServeHTTP(w, r)
	})
}

// closingWriter sets Connection: close as its headers are written, over
// whatever the handler set (a stream's keep-alive).
type closingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *closingWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.Header().Set("Connection", "close")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closingWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps the writer a Flusher, as streams need.
func (w *closingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		if !w.wrote {
			w.WriteHeader(http.StatusOK)
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *closingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// drainGate counts calls in progress and, once closed, admits no more and
// reports when the last one has finished.
type drainGate struct {
	mu     sync.Mutex
	n      int
	shut   bool
	zeroed chan struct{} // closed when shut and n == 0
}

func (g *drainGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut {
		return false
	}
	g.n++
	return true
}

func (g *drainGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n--; g.n == 0 && g.shut {
		close(g.zeroed)
	}
}

// close admits no more calls; the channel is closed when none is left.
func (g *drainGate) close() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.shut {
		g.shut = true
		g.zeroed = make(chan struct{})
		if g.n == 0 {
			close(g.zeroed)
		}
	}
	return g.zeroed
}

func (g *drainGate) closed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.shut
}

func (g *drainGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// protocolEras lists what the HTTP endpoint negotiates, for pacto_server_info.
func protocolEras() []string {
	return slices.Clone([]string{statelessEra + " (stateless)", "2025-11-25 (sessions)", "2025-06-18 (sessions)", "2025-03-26 (sessions)"})
}
