//go:build !sidecaronly

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/grpcdemo"
)

// TestCheckJSONWhenCannotCheck: with -o json, stdout is exactly one JSON
// document even when the bundle cannot be loaded, so a CI step parsing it
// reads {valid: false, errors: [{code, message}]} rather than nothing; the
// exit status stays 2 and stderr still says what happened.
func TestCheckJSONWhenCannotCheck(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")

	big := t.TempDir()
	if err := os.CopyFS(big, os.DirFS(catalog)); err != nil {
		t.Fatal(err)
	}
	// One byte over the 10 MiB per-file limit, written sparse.
	f, err := os.Create(filepath.Join(big, "interfaces", "blob.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(10<<20 + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	brokenConfig := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(brokenConfig, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		args     []string
		wantCode string
	}{
		{"missing directory", []string{filepath.Join(t.TempDir(), "nope")}, "NOT_FOUND"},
		{"no pacto.yaml", []string{t.TempDir()}, "BUNDLE_UNREADABLE"},
		{"file over the limit", []string{big}, "LIMIT_EXCEEDED"},
		{"malformed reference", []string{"oci://Not A Ref"}, "INVALID_REFERENCE"},
		{"empty reference", []string{"oci://"}, "INVALID_REFERENCE"},
		{"unreadable registry config", []string{catalog, "--registry-config", brokenConfig}, "REGISTRY_CONFIG_INVALID"},
		{"registry does not answer", []string{fmt.Sprintf("oci://127.0.0.1:%d/acme/catalog:1.0.0", freeport.Port(t)), "--plain-http"}, "UNAVAILABLE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"check"}, tt.args...)
			args = append(args, "-o", "json")
			out, stderr, code := runKubepact(t, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (could not check)", code)
			}
			dec := json.NewDecoder(strings.NewReader(out))
			var rep struct {
				Valid  *bool  `json:"valid"`
				Source string `json:"source"`
				Errors []struct {
					Path    *string `json:"path"`
					Code    string  `json:"code"`
					Message string  `json:"message"`
				} `json:"errors"`
				Warnings []json.RawMessage `json:"warnings"`
			}
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("stdout is not a JSON document: %v\nstdout: %q\nstderr: %s", err, out, stderr)
			}
			if _, err := dec.Token(); !errors.Is(err, io.EOF) {
				t.Errorf("stdout holds more than one JSON document: %q", out)
			}
			if rep.Valid == nil || *rep.Valid {
				t.Errorf("valid = %v, want false: %s", rep.Valid, out)
			}
			if len(rep.Errors) != 1 || rep.Errors[0].Code != tt.wantCode || rep.Errors[0].Message == "" || rep.Errors[0].Path == nil {
				t.Errorf("errors = %+v, want one {path, code: %s, message}", rep.Errors, tt.wantCode)
			}
			if rep.Warnings == nil {
				t.Errorf("warnings missing, want []: %s", out)
			}
			if rep.Source == "" {
				t.Errorf("source missing: %s", out)
			}
			if len(rep.Errors) == 1 && !strings.Contains(stderr, rep.Errors[0].Message) {
				t.Errorf("stderr %q does not carry the message %q", stderr, rep.Errors[0].Message)
			}
		})
	}

	// Without -o json nothing changes: the message on stderr, stdout empty.
	out, stderr, code := runKubepact(t, "check", big)
	if code != 2 || out != "" || !strings.Contains(stderr, "per-file limit") {
		t.Errorf("check %s (text): exit %d, stdout %q, stderr %q", big, code, out, stderr)
	}
}

// TestCheckGRPCReflect: kubepact check --grpc-reflect against test/grpcdemo
// with reflection: valid when the server matches the bundle; against a
// server serving an edited proto, invalid with one GRPC_REFLECT_* error
// per difference; against a server without reflection, exit 2 naming why.
func TestCheckGRPCReflect(t *testing.T) {
	inv := filepath.Join(repoRoot(t), "examples", "grpc", "inventory")
	file := "interfaces/inventory/v1/inventory.proto"
	serve := func(dir string, opts *grpcdemo.Options) string {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv, err := grpcdemo.ServeWith(t.Context(), lis, os.DirFS(dir), file, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		return srv.Addr
	}
	stdout, stderr, code := runKubepact(t, "check", inv, "--grpc-reflect", serve(inv, &grpcdemo.Options{Reflection: true}))
	if code != 0 || !strings.Contains(stdout, "valid — 0 errors") {
		t.Errorf("a matching server: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	edited := t.TempDir()
	if err := os.CopyFS(edited, os.DirFS(inv)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(edited, file)
	raw, _ := os.ReadFile(p)
	changed := strings.Replace(string(raw), "  int64 quantity = 3;", "  string quantity = 3;", 1)
	if err := os.WriteFile(p, []byte(changed), 0o644); err != nil || changed == string(raw) {
		t.Fatalf("editing the proto: %v", err)
	}
	stdout, stderr, code = runKubepact(t, "check", inv, "-o", "json", "--grpc-reflect", serve(edited, &grpcdemo.Options{ReflectionV1AlphaOnly: true}))
	var rep struct {
		Valid  bool
		Errors []struct{ Path, Code, Message string }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-o json: %v\n%s", err, stdout)
	}
	if code != 1 || rep.Valid || len(rep.Errors) != 1 || rep.Errors[0].Code != "GRPC_REFLECT_FIELD_TYPE" ||
		rep.Errors[0].Path != "interfaces[grpc]: inventory.v1.Item.quantity" || !strings.Contains(rep.Errors[0].Message, "int64 in the bundle and string on the server") {
		t.Errorf("a server with a changed field: exit %d, %+v, stderr %q", code, rep, stderr)
	}

	_, stderr, code = runKubepact(t, "check", inv, "--grpc-reflect", serve(inv, nil))
	if code != 2 || !strings.Contains(stderr, "serves no reflection") {
		t.Errorf("a server without reflection: exit %d, stderr %q", code, stderr)
	}
}
