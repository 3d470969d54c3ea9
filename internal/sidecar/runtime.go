package sidecar

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/kubepact/kubepact/bundle"
)

// ReadyDetails is what /readyz?verbose reports once ready: which bundle
// the sidecar serves and a digest of the tool surface it offers, so that a
// Pod still serving an old contract after a tag moved can be told apart.
type ReadyDetails struct {
	Bundle            string `json:"bundle"`
	BundleDigest      string `json:"bundleDigest"`
	ToolSurfaceDigest string `json:"toolSurfaceDigest"`
	Tools             int    `json:"tools"`
}

// Health serves the kubelet's probes: /healthz (the process is up) and
// /readyz (the tools are registered and the endpoint accepts calls; with
// ?verbose, the ReadyDetails as JSON).
type Health struct {
	srv     *http.Server
	ln      net.Listener
	ready   atomic.Bool
	details atomic.Pointer[ReadyDetails]
}

// ServeHealth listens on addr and serves the probes, not ready, until
// Close. A listen failure is returned as net.Listen's.
func ServeHealth(ctx context.Context, addr string) (*Health, error) {
	h := &Health{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !h.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		if d := h.details.Load(); d != nil && r.URL.Query().Has("verbose") {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(d)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--health-addr: %w", err)
	}
	h.srv, h.ln = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

// Ready turns /readyz ready, reporting d.
func (h *Health) Ready(d ReadyDetails) {
	h.details.Store(&d)
	h.ready.Store(true)
}

// Unready turns /readyz unready (on SIGTERM, while calls drain).
func (h *Health) Unready() { h.ready.Store(false) }

// Close stops serving the probes; the address is free when it returns
// (the listener is closed here, not only when Serve next runs).
func (h *Health) Close() error {
	err := h.srv.Close()
	_ = h.ln.Close() // closed twice when Serve already runs; the second is a no-op
	return err
}

// CheckDigest refuses a bundle whose digest is not cfg.BundleDigest.
func CheckDigest(cfg Config, b *bundle.Bundle) error {
	if cfg.BundleDigest == "" || string(b.Identity) == cfg.BundleDigest {
		return nil
	}
	return fmt.Errorf("--bundle %s has digest %s, but --bundle-digest pins %s: the bundle changed since it was pinned (for a ConfigMap bundle: the ConfigMap was edited after the Pod was admitted); refusing to serve another contract than the Pod was admitted with — recreate the Pod to pin the current one", cfg.Bundle, b.Identity, cfg.BundleDigest)
}

// SettleMemory applies the soft memory limit and returns what loading the
// bundle left behind to the OS. A small bundle's live heap is about a MiB;
// most of the sidecar's resident memory is then the binary's own pages,
// start-up garbage the runtime would otherwise keep mapped, and the heap
// headroom a burst of calls grows. The limit makes the runtime collect
// sooner, and give memory back, as it nears the limit instead of growing
// the heap unchecked. GOMEMLIMIT, when set, wins.
//
// A limit below what the served bundle itself keeps live cannot be met:
// the runtime would collect on nearly every allocation and give nothing
// back (with GitHub's REST API, 1,200 tools and about 60 MiB live, a call
// took ten times its CPU). So the limit applied is never under the memory
// the runtime holds once start-up garbage is collected, plus a quarter of
// it as headroom.
//
// It also raises GOGC, unless GOGC is set, to gcPercent of the live heap
// left after start-up: DefaultGCPercent for a small heap, Go's default
// 100 for a large one. It returns the limit applied in bytes (0: none) and
// the GOGC in effect.
func SettleMemory(limitMiB int64) (limit int64, gcPct int) {
	debug.FreeOSMemory()
	if _, set := os.LookupEnv("GOGC"); set {
		gcPct = debug.SetGCPercent(100)
		debug.SetGCPercent(gcPct)
	} else {
		gcPct = gcPercent(liveHeapBytes())
		debug.SetGCPercent(gcPct)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || limitMiB <= 0 {
		return 0, gcPct
	}
	limit = max(limitMiB<<20, settledBytes()*5/4)
	debug.SetMemoryLimit(limit)
	return limit, gcPct
}

// SettleProcs sets how many OS threads run Go code at once (GOMAXPROCS)
// to n once start-up is over, and returns the number in effect. GOMAXPROCS,
// when set, wins; n <= 0 keeps the Go runtime's default (the CPUs, or the
// container's CPU limit).
func SettleProcs(n int) int {
	if _, set := os.LookupEnv("GOMAXPROCS"); !set && n > 0 {
		runtime.GOMAXPROCS(n)
	}
	return runtime.GOMAXPROCS(0)
}

// gcHeadroomBytes bounds what gcPercent adds to Go's default: a GOGC
// above 100 lets garbage reach at most this much between collections, so
// the heap grows at most gcHeadroomBytes/2 past Go's default goal, and a
// heap of this size or more keeps Go's default.
const gcHeadroomBytes = 8 << 20

// gcPercent is the GOGC for a live heap of live bytes: DefaultGCPercent
// up to gcHeadroomBytes/2 live, then what lets gcHeadroomBytes of garbage
// pile up, never under 100.
func gcPercent(live int64) int {
	if live <= 0 {
		return DefaultGCPercent
	}
	return int(min(DefaultGCPercent, max(100, gcHeadroomBytes*100/live)))
}

// liveHeapBytes is the heap the last collection found live.
func liveHeapBytes() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// settledBytes is the memory the Go runtime holds and counts against its
// limit: everything it has mapped but what it has returned to the OS.
func settledBytes() int64 {
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(samples)
	if samples[0].Value.Kind() != metrics.KindUint64 || samples[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(samples[0].Value.Uint64() - samples[1].Value.Uint64())
}
