// Command demoregistry serves an empty OCI registry from memory on
// loopback, for `make demo`: hack/demo.sh pushes the example bundles to it
// with `kubepact push`, and the catalog family resolves them from it. What
// it holds is gone when it stops.
//
//	go run ./hack/demoregistry --listen 127.0.0.1:5005
package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:5005", "address to serve on (loopback: the registry has no authentication)")
	verbose := flag.Bool("v", false, "log every request")
	flag.Parse()

	host, _, err := net.SplitHostPort(*listen)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		log.Fatalf("demoregistry: --listen %s: want a loopback address such as 127.0.0.1:5005 (the registry has no authentication)", *listen)
	}
	reqLog := log.New(io.Discard, "", 0)
	if *verbose {
		reqLog = log.New(os.Stderr, "demoregistry: ", log.LstdFlags)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *listen, Handler: registry.New(registry.Logger(reqLog)), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("demoregistry: serving an in-memory OCI registry on http://%s", *listen)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		stop()
		log.Fatalf("demoregistry: %v", err) //nolint:gocritic // stop() has run
	}
}
