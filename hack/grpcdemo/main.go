// Command grpcdemo serves the gRPC example's Inventory service
// (examples/grpc/inventory) with test/grpcdemo, for `make demo` and the
// end-to-end suite's real node:
//
//	go run ./hack/grpcdemo --listen 127.0.0.1:9090
//
// It compiles the example's .proto at start (--proto), so it serves what
// the bundle declares.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/kubepact/kubepact/test/grpcdemo"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:9090", "address to serve on")
	proto := flag.String("proto", filepath.Join("examples", "grpc", "inventory", "interfaces", "inventory", "v1", "inventory.proto"),
		"the Inventory service's .proto file; its imports are read beside it")
	flag.Parse()
	if err := run(*listen, *proto); err != nil {
		log.Fatalf("grpcdemo: %v", err)
	}
}

// run serves until SIGINT or SIGTERM.
func run(listen, proto string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := os.Stat(proto); err != nil {
		return fmt.Errorf("--proto: %w (run it from the repository's root, or name the file)", err)
	}
	lis, err := (&net.ListenConfig{}).Listen(ctx, "tcp", listen)
	if err != nil {
		return err
	}
	srv, err := grpcdemo.Serve(ctx, lis, os.DirFS(filepath.Dir(proto)), filepath.Base(proto))
	if err != nil {
		return err
	}
	log.Printf("grpcdemo: serving inventory.v1.Inventory (h2c) on %s", srv.Addr)
	<-ctx.Done()
	srv.Stop()
	return nil
}
