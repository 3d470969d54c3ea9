package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/capability"
)

// Endpoint is the only HTTP path served; every other path is 404.
const Endpoint = "/mcp"

// statelessEra is the first protocol version without sessions. The SDK
// speaks it only on a stateless handler, and older versions only on a
// stateful one (for sessions), so each request is routed on the
// Mcp-Protocol-Version header that every request of the new era carries.
// Requests without it (initialize, or 2025-era session traffic) are
// stateful.
const statelessEra = "2026-07-28"

// Handler returns the hardened HTTP handler: /mcp behind Host and Origin
// checks and, when configured, bearer authentication. The operator mounts
// it on its own server; Run and Serve use it too.
func (s *Server) Handler() http.Handler { return s.httpHandler }

func (s *Server) newHTTPHandler() http.Handler {
	getServer := func(*http.Request) *sdk.Server { return s.sdk }
	sdkLog := sdkLogger(s.log.WithName("http"))
	// The SDK's own localhost protection is off because guard does the same
	// check and more: it also honours AllowedHosts, and it also applies when
	// the listener is not on loopback.
	stateful := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{
		SessionTimeout:             s.opts.SessionTimeout,
		MaxRequestBodyBytes:        s.opts.MaxRequestBytes,
		Logger:                     sdkLog,
		DisableLocalhostProtection: true,
	})
	stateless := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{
		Stateless:                  true,
		MaxRequestBodyBytes:        s.opts.MaxRequestBytes,
		Logger:                     sdkLog,
		DisableLocalhostProtection: true,
	})
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Protocol-Version") >= statelessEra {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
	mux := http.NewServeMux()
	mux.Handle(Endpoint, s.guard(route))
	return mux
}

// guard rejects DNS-rebinding and cross-origin requests (403) and, with a
// token configured, unauthenticated ones (401), before the MCP handler
// sees them.
func (s *Server) guard(next http.Handler) http.Handler {
	allowedHosts := map[string]bool{}
	for _, h := range s.opts.AllowedHosts {
		allowedHosts[strings.ToLower(strings.TrimSpace(h))] = true
	}
	if ip := net.ParseIP(s.opts.Listen); ip != nil && !ip.IsUnspecified() {
		allowedHosts[ip.String()] = true // clients may dial the listen address itself
	}
	hostOK := func(host string) bool {
		host = strings.ToLower(strings.TrimSuffix(host, "."))
		return capability.IsLoopbackHost(host) || allowedHosts[host]
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
		if s.tokenSum != nil && !s.authorized(w, r) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// authorized checks the bearer token in constant time (over digests, so the
// length leaks nothing either) and answers 401 when it fails.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kubepact"`)
		http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	if subtle.ConstantTimeCompare(sum[:], s.tokenSum) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kubepact", error="invalid_token"`)
		http.Error(w, "Unauthorized: invalid bearer token", http.StatusUnauthorized)
		return false
	}
	return true
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
// gracefully: open sessions are closed, in-flight requests get
// ShutdownTimeout to finish, and whatever remains is cut off.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	url := "http://" + ln.Addr().String() + Endpoint
	s.servedURL.Store(&url)
	host := hostname(ln.Addr().String())
	if !capability.IsLoopbackHost(host) && s.tokenSum == nil {
		s.log.Info("WARNING: serving MCP beyond loopback without authentication; anyone who can reach this address can call every tool", "url", url)
	}
	srv := &http.Server{
		Handler:           s.httpHandler,
		ReadHeaderTimeout: defaultReadHeaderWait,
		IdleTimeout:       defaultIdleConnTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logr.ToSlogHandler(s.log.WithName("http")), slog.LevelError),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	s.log.Info("Serving MCP over Streamable HTTP", "url", url, "tools", s.ToolNames(), "readOnly", s.opts.ReadOnly,
		"authentication", s.tokenSum != nil, "workspace", s.opts.Workspace)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}

	s.log.Info("Shutting down MCP over HTTP", "timeout", s.opts.ShutdownTimeout)
	for ss := range s.sdk.Sessions() {
		_ = ss.Close() // ends long-lived SSE streams so Shutdown can finish
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// protocolEras lists what the HTTP endpoint negotiates, for pacto_server_info.
func protocolEras() []string {
	return slices.Clone([]string{statelessEra + " (stateless)", "2025-11-25 (sessions)", "2025-06-18 (sessions)", "2025-03-26 (sessions)"})
}
