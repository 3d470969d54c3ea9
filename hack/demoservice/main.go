// Command demoservice serves the catalog example's API
// (examples/bundles/catalog) from memory, for `make demo`:
//
//	go run ./hack/demoservice --listen 127.0.0.1:8080
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kubepact/kubepact/test/demoservice"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to serve on")
	tokenFile := flag.String("token-file", "", "file holding the bearer token calls must carry (default: none)")
	flag.Parse()

	opts := &demoservice.Options{}
	if *tokenFile != "" {
		raw, err := os.ReadFile(*tokenFile)
		if err != nil {
			log.Fatalf("demoservice: %v", err)
		}
		opts.Token = string(trimSpace(raw))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *listen, Handler: demoservice.New(opts), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	log.Printf("demoservice: serving the catalog API on http://%s", *listen)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		stop()
		log.Fatalf("demoservice: %v", err) //nolint:gocritic // stop() has run
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
