package invoke

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/test/grpcdemo"
)

// startInventoryTLS serves the Inventory service over TLS on a loopback
// port, its certificate issued for names by a CA made for the test; it
// returns the server and the path of the CA's PEM file.
func startInventoryTLS(t *testing.T, names ...string) (*grpcdemo.Server, string) {
	t.Helper()
	certs, err := grpcdemo.NewCertificates(names...)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcdemo.ServeTLS(t.Context(), lis, loadBundle(t).FS, "interfaces/inventory/v1/inventory.proto", certs.Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, certs.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv, ca
}

// TestTLSTarget: a real grpc-go server over TLS, its certificate from a
// CA generated here. With that CA the call works (by IP and by a name the
// certificate holds); another CA, a name the certificate does not hold,
// or plaintext to the TLS port are tool results that say which, and
// reach no RPC.
func TestTLSTarget(t *testing.T) {
	srv, ca := startInventoryTLS(t, "127.0.0.1", "inventory.test")
	_, otherCA := startInventoryTLS(t, "127.0.0.1")

	for _, ok := range []grpctools.Options{
		{Target: srv.Addr, UseTLS: true, CAFile: ca},
		{Target: srv.Addr, UseTLS: true, CAFile: ca, ServerName: "inventory.test"},
	} {
		c, cl := project(t, ok)
		if res := call(t, cl, c, "Inventory_GetItem", `{"sku":"ab-1"}`); res.Code != "OK" {
			t.Errorf("over TLS (server name %q): %s %+v", ok.ServerName, res.Code, res.Status)
		}
	}
	calls := srv.Calls("GetItem")
	for _, bad := range []struct {
		name string
		opts grpctools.Options
		says string
	}{
		{"wrong CA", grpctools.Options{Target: srv.Addr, UseTLS: true, CAFile: otherCA}, "not signed by a CA this client trusts (CAFile"},
		{"system roots", grpctools.Options{Target: srv.Addr, UseTLS: true}, "not signed by a CA this client trusts"},
		{"wrong server name", grpctools.Options{Target: srv.Addr, UseTLS: true, CAFile: ca, ServerName: "billing.test"}, "does not hold the name billing.test (ServerName"},
		{"plaintext to TLS", grpctools.Options{Target: srv.Addr, Timeout: 5 * time.Second}, "reach it with TLS"},
	} {
		c, cl := project(t, bad.opts)
		res := call(t, cl, c, "Inventory_GetItem", `{"sku":"ab-1"}`)
		if res.Code != "UNAVAILABLE" || res.Status == nil || !strings.Contains(res.Status.Message, bad.says) {
			t.Errorf("%s: %s %+v; want UNAVAILABLE saying %q", bad.name, res.Code, res.Status, bad.says)
		}
	}
	if got := srv.Calls("GetItem"); got != calls {
		t.Errorf("refused connections reached the RPC %d time(s)", got-calls)
	}

	// TLS to a server that speaks plaintext.
	plain := startInventory(t)
	c, cl := project(t, grpctools.Options{Target: plain.Addr, UseTLS: true, CAFile: ca})
	if res := call(t, cl, c, "Inventory_GetItem", `{"sku":"ab-1"}`); res.Code != "UNAVAILABLE" || !strings.Contains(res.Status.Message, "does not speak TLS") {
		t.Errorf("TLS to a plaintext server: %s %+v", res.Code, res.Status)
	}
}
