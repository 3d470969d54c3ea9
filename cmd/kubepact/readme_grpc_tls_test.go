//go:build !sidecaronly

package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/grpcdemo"
)

// TestReadmeGRPCTLSLine runs the README's TLS line as written, in a
// directory holding the gRPC example and the ca.pem it names, beside a
// real grpc-go server over TLS on the line's port, its certificate issued
// for the line's server name by a CA made here: the call goes through.
// When the port is taken, the start-up is still checked and the call's
// answer must be UNAVAILABLE in words.
func TestReadmeGRPCTLSLine(t *testing.T) {
	lines := readmeCommands(t, "grpc-tls")
	if len(lines) != 1 {
		t.Fatalf("the README's grpc-tls block is %q", lines)
	}
	fields := strings.Fields(lines[0])
	flag := func(name string) string {
		for i, f := range fields {
			if f == name && i+1 < len(fields) {
				return fields[i+1]
			}
		}
		t.Fatalf("%s: no %s", lines[0], name)
		return ""
	}
	target, caFile, serverName := flag("--grpc-target"), flag("--grpc-ca-file"), flag("--grpc-server-name")
	work := t.TempDir()
	inv := filepath.Join(repoRoot(t), "examples", "grpc", "inventory")
	if err := os.CopyFS(filepath.Join(work, "examples", "grpc", "inventory"), os.DirFS(inv)); err != nil {
		t.Fatal(err)
	}
	certs, err := grpcdemo.NewCertificates(serverName)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, caFile), certs.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	serving := false
	if lis, err := net.Listen("tcp", target); err == nil {
		srv, err := grpcdemo.ServeTLS(t.Context(), lis, os.DirFS(inv), "interfaces/inventory/v1/inventory.proto", certs.Server)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		serving = true
	} else {
		t.Logf("%s is taken here (%v): checking the start-up and the refused call only", target, err)
	}
	env, _ := readmeEnv(t)
	cs := connectStdio(t, readmeLine(t.Context(), work, env, lines[0]))
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "Inventory_GetItem", Arguments: map[string]any{"sku": "ab-1"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := res.StructuredContent.(map[string]any)
	switch {
	case serving && (res.IsError || got["code"] != "OK"):
		t.Errorf("%s: the call over TLS answered %v", lines[0], res.StructuredContent)
	case !serving && got["code"] != "UNAVAILABLE":
		t.Errorf("%s: with the port taken, the call answered %v", lines[0], res.StructuredContent)
	}
}

// TestGRPCRemoteTargetRefusedWithoutTLS: kubepact mcp refuses plaintext
// to a host that is not loopback at start, naming --grpc-tls; the
// sidecar has no TLS flags and refuses a remote target whatever is given.
func TestGRPCRemoteTargetRefusedWithoutTLS(t *testing.T) {
	inv := filepath.Join(repoRoot(t), "examples", "grpc", "inventory")
	_, stderr, code := runKubepact(t, "mcp", inv, "--grpc-target", "10.0.0.7:9090")
	if code == 0 || !strings.Contains(stderr, "not a loopback address") || !strings.Contains(stderr, "--grpc-tls") {
		t.Errorf("plaintext to a remote target: exit %d, %q", code, stderr)
	}
	_, stderr, code = runKubepact(t, "mcp", inv, "--grpc-target", "127.0.0.1:9090", "--grpc-ca-file", "ca.pem")
	if code == 0 || !strings.Contains(stderr, "--grpc-ca-file and --grpc-server-name verify a TLS connection: give --grpc-tls") {
		t.Errorf("--grpc-ca-file without --grpc-tls: exit %d, %q", code, stderr)
	}
	_, stderr, code = runKubepact(t, "sidecar", "--bundle", inv, "--upstream", "http://127.0.0.1:9", "--grpc-target", "10.0.0.7:9090")
	if code == 0 || !strings.Contains(stderr, "the sidecar reaches only the service in its own pod") || strings.Contains(stderr, "--grpc-tls") {
		t.Errorf("sidecar with a remote target: exit %d, %q", code, stderr)
	}
	_, stderr, code = runKubepact(t, "sidecar", "--bundle", inv, "--upstream", "http://127.0.0.1:9", "--grpc-target", "10.0.0.7:9090", "--grpc-tls")
	if code == 0 || !strings.Contains(stderr, "grpc-tls") {
		t.Errorf("sidecar with --grpc-tls: exit %d, %q", code, stderr)
	}
}

// TestReadmeGRPCReflectLine runs the README's reflection line as written,
// in a directory holding the gRPC example, beside test/grpcdemo with
// reflection on the line's port: the check passes. When the port is
// taken, whatever serves there is checked and the answer must be a report
// or a worded failure (exit 0, 1 or 2 with a message).
func TestReadmeGRPCReflectLine(t *testing.T) {
	lines := readmeCommands(t, "grpc-reflect")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "kubepact check examples/grpc/inventory --grpc-reflect ") {
		t.Fatalf("the README's grpc-reflect block is %q", lines)
	}
	target := strings.Fields(lines[0])[4]
	work := t.TempDir()
	inv := filepath.Join(repoRoot(t), "examples", "grpc", "inventory")
	if err := os.CopyFS(filepath.Join(work, "examples", "grpc", "inventory"), os.DirFS(inv)); err != nil {
		t.Fatal(err)
	}
	serving := false
	if lis, err := net.Listen("tcp", target); err == nil {
		srv, err := grpcdemo.ServeWith(t.Context(), lis, os.DirFS(inv), "interfaces/inventory/v1/inventory.proto", &grpcdemo.Options{Reflection: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		serving = true
	} else {
		t.Logf("%s is taken here (%v): checking that the line answers in words only", target, err)
	}
	env, _ := readmeEnv(t)
	out, err := readmeLine(t.Context(), work, env, lines[0]).CombinedOutput()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	switch {
	case serving && (code != 0 || !strings.Contains(string(out), "examples/grpc/inventory): valid — 0 errors")):
		t.Errorf("%s: exit %d\n%s", lines[0], code, out)
	case !serving && (code > 2 || len(out) == 0):
		t.Errorf("%s with the port taken: exit %d\n%s", lines[0], code, out)
	}
}
