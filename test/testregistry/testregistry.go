package testregistry

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/sirupsen/logrus"
	"golang.org/x/crypto/bcrypt"

	// Registered by init: the htpasswd access controller and the in-memory
	// storage driver the configuration below names.
	_ "github.com/distribution/distribution/v3/registry/auth/htpasswd"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
)

// Options configure a registry. A nil *Options means no authentication.
type Options struct {
	// Username and Password, when Username is set, turn on HTTP basic
	// authentication: every request must carry them.
	Username, Password string
	// Addr is the address to listen on (default "127.0.0.1:0"); another
	// loopback address, such as "127.0.0.2:0", stands for another host.
	Addr string
	// TLS serves HTTPS with a certificate no system trusts (httptest's).
	TLS bool
	// Wrap, when set, wraps the registry's handler: a test makes the
	// registry stall, answer slowly or fail by putting its own handler
	// in front of the real one. Requests still count in Requests.
	Wrap func(registry http.Handler) http.Handler
}

// Registry is a running registry. It stops when the test that started it
// ends.
type Registry struct {
	// Host is "127.0.0.1:port", the registry part of a reference.
	Host string
	// URL is "http://127.0.0.1:port" ("https://…" with Options.TLS).
	URL string
	// CertFile is, with Options.TLS, a PEM file of the server's
	// certificate: point SSL_CERT_FILE at it to make a process trust it.
	CertFile string

	mu       sync.Mutex
	requests []Request
}

// Request is one HTTP request the registry received.
type Request struct {
	Method string
	Path   string
}

func (r Request) String() string { return r.Method + " " + r.Path }

var quietLogs sync.Once

// New starts a registry on 127.0.0.1 (or Options.Addr) and registers its
// shutdown with tb.Cleanup. It speaks plain HTTP unless Options.TLS.
func New(tb testing.TB, opts *Options) *Registry {
	tb.Helper()
	if opts == nil {
		opts = &Options{}
	}
	// The registry logs every request at info level through logrus'
	// standard logger and ignores its own log configuration.
	quietLogs.Do(func() {
		logrus.SetOutput(io.Discard)
		logrus.SetLevel(logrus.PanicLevel)
	})

	cfg := &configuration.Configuration{}
	cfg.Storage = configuration.Storage{
		"inmemory": configuration.Parameters{},
		"delete":   configuration.Parameters{"enabled": true},
		"maintenance": configuration.Parameters{
			"uploadpurging": map[any]any{"enabled": false},
		},
	}
	cfg.HTTP.Secret = "kubepact-testregistry"
	if opts.Username != "" {
		cfg.Auth = configuration.Auth{"htpasswd": configuration.Parameters{
			"realm": "kubepact-test",
			"path":  htpasswdFile(tb, opts.Username, opts.Password),
		}}
	}

	ctx, cancel := context.WithCancel(context.WithoutCancel(tb.Context()))
	app := handlers.NewApp(ctx, cfg)
	r := &Registry{}
	var h http.Handler = app
	if opts.Wrap != nil {
		h = opts.Wrap(app)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.requests = append(r.requests, Request{Method: req.Method, Path: req.URL.Path})
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	}))
	if opts.Addr != "" {
		ln, err := net.Listen("tcp", opts.Addr)
		if err != nil {
			cancel()
			tb.Fatalf("testregistry: listening on %s: %v", opts.Addr, err)
		}
		_ = srv.Listener.Close()
		srv.Listener = ln
	}
	// A client that speaks plain HTTP to the TLS server, or gives up on
	// a handshake, is what some tests are about: not worth a log line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if opts.TLS {
		srv.StartTLS()
		r.CertFile = filepath.Join(tb.TempDir(), "registry.pem")
		pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
		if err := os.WriteFile(r.CertFile, pemCert, 0o600); err != nil {
			tb.Fatalf("testregistry: writing the certificate: %v", err)
		}
	} else {
		srv.Start()
	}
	r.URL = srv.URL
	r.Host = strings.TrimPrefix(strings.TrimPrefix(srv.URL, "http://"), "https://")
	tb.Cleanup(func() {
		// A request a Wrap still holds ends with its connection.
		srv.CloseClientConnections()
		srv.Close()
		_ = app.Shutdown()
		cancel()
	})
	return r
}

// Requests returns the requests received since the start or the last
// ResetRequests, oldest first.
func (r *Registry) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// ResetRequests forgets the requests received so far.
func (r *Registry) ResetRequests() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = nil
}

// BlobFetches counts the GET requests for blobs (not manifests) received
// since the start or the last ResetRequests.
func (r *Registry) BlobFetches() int {
	n := 0
	for _, req := range r.Requests() {
		if req.Method == http.MethodGet && strings.Contains(req.Path, "/blobs/") {
			n++
		}
	}
	return n
}

// htpasswdFile writes a one-user htpasswd file at bcrypt's minimum cost: the
// registry checks it on every request.
func htpasswdFile(tb testing.TB, user, password string) string {
	tb.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		tb.Fatalf("testregistry: hashing password: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "htpasswd")
	if err := os.WriteFile(path, fmt.Appendf(nil, "%s:%s\n", user, hash), 0o600); err != nil {
		tb.Fatalf("testregistry: %v", err)
	}
	return path
}

// Stall is a Wrap for a registry that accepts every request and never
// answers: each is held until its client gives up or the registry stops.
// It counts the requests it holds.
type Stall struct {
	held, total atomic.Int64
	asked       chan struct{}
	once        sync.Once
}

// NewStall returns a Stall holding nothing yet.
func NewStall() *Stall { return &Stall{asked: make(chan struct{})} }

// Wrap holds every request; the registry behind it is never asked.
func (s *Stall) Wrap(http.Handler) http.Handler {
	return http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		s.held.Add(1)
		s.total.Add(1)
		defer s.held.Add(-1)
		s.once.Do(func() { close(s.asked) })
		<-r.Context().Done()
	})
}

// Held is the number of requests held now, unanswered.
func (s *Stall) Held() int64 { return s.held.Load() }

// Total is the number of requests received so far.
func (s *Stall) Total() int64 { return s.total.Load() }

// Asked is closed once the first request is held.
func (s *Stall) Asked() <-chan struct{} { return s.asked }

// Delay is a Wrap for a registry that answers slowly: every request waits
// d before the registry sees it (less if its client gives up first).
func Delay(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				next.ServeHTTP(w, r)
			case <-r.Context().Done():
			}
		})
	}
}
