package invoke

import (
	"net"
	"testing"
	"time"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/test/grpcdemo"
)

func loadBundle(t testing.TB) *bundle.Bundle {
	t.Helper()
	b, err := bundle.LoadDir("../../../examples/grpc/inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startInventory serves the test bundle's Inventory service (a real
// grpc-go server, test/grpcdemo) on a loopback port until the test ends.
func startInventory(t testing.TB) *grpcdemo.Server {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcdemo.Serve(t.Context(), lis, loadBundle(t).FS, "interfaces/inventory/v1/inventory.proto")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// project projects the test bundle with opts.
func project(t testing.TB, opts grpctools.Options) (*grpctools.Capability, *Client) {
	t.Helper()
	c, err := grpctools.Project(t.Context(), loadBundle(t), &opts)
	if err != nil {
		t.Fatal(err)
	}
	cl := NewClient(c)
	t.Cleanup(func() { _ = cl.Close() })
	return c, cl
}

// waitFor polls cond for up to 5 s (the server side ends a cancelled
// stream on its own goroutine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
