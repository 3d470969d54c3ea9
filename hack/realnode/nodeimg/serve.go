package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory" // the inmemory storage driver
)

// pause blocks until SIGTERM or SIGINT, reaping the children the Pod's
// containers leave to it (it is PID 1 of the Pod's sandbox).
func pause() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range c {
		if s != syscall.SIGCHLD {
			return
		}
		for {
			var ws syscall.WaitStatus
			if pid, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 {
				break
			}
		}
	}
}

// serveRegistry serves an in-memory distribution registry (the server
// test/testregistry runs in process) until SIGTERM.
func serveRegistry(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cfg := &configuration.Configuration{}
	cfg.Storage = configuration.Storage{
		"inmemory":    configuration.Parameters{},
		"delete":      configuration.Parameters{"enabled": true},
		"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
	}
	cfg.HTTP.Secret = "kubepact-realnode"
	srv := &http.Server{Addr: addr, Handler: handlers.NewApp(ctx, cfg), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving %s: %w", addr, err)
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}
