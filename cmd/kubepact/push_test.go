//go:build !sidecaronly

package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/test/testregistry"
)

// TestPushAndCheckRemote pushes an example bundle to a real registry on
// loopback with credentials from a .dockerconfigjson file (what a pull
// Secret holds), then checks it by reference: one bundle, one identity.
func TestPushAndCheckRemote(t *testing.T) {
	reg := testregistry.New(t, &testregistry.Options{Username: "ci", Password: "s3cret"})
	secret := func(password string) string {
		auth := base64.StdEncoding.EncodeToString([]byte("ci:" + password))
		f := filepath.Join(t.TempDir(), ".dockerconfigjson")
		if err := os.WriteFile(f, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, reg.Host, auth), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	dir := filepath.Join(repoRoot(t), "examples", "bundles", "payments")
	ref := "oci://" + reg.Host + "/examples/payments:3.0.2"

	packed, _, code := runKubepact(t, "pack", dir, "-o", filepath.Join(t.TempDir(), "layer.tgz"))
	if code != 0 {
		t.Fatalf("pack: exit %d", code)
	}

	out, stderr, code := runKubepact(t, "push", dir, ref, "--plain-http", "--registry-secret-file", secret("s3cret"))
	if code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	if strings.TrimSpace(out) != strings.TrimSpace(packed) {
		t.Errorf("push printed %q, pack %q: a directory and its pushed copy have one identity", out, packed)
	}

	checkOut, stderr, code := runKubepact(t, "check", ref, "-o", "json", "--plain-http", "--registry-secret-file", secret("s3cret"))
	if code != 0 {
		t.Fatalf("check %s: exit %d: %s\n%s", ref, code, stderr, checkOut)
	}
	var rep checkReport
	if err := json.Unmarshal([]byte(checkOut), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Valid || rep.Identity != strings.TrimSpace(out) || rep.Source != ref {
		t.Errorf("remote check = %+v; want valid, identity %s, source %s", rep, out, ref)
	}

	_, stderr, code = runKubepact(t, "push", dir, ref, "--plain-http", "--registry-secret-file", secret("wrong"))
	if code != 2 || !strings.Contains(strings.ToLower(stderr), "auth") || !strings.Contains(stderr, reg.Host) {
		t.Errorf("push with a wrong password: exit %d, stderr %q; want exit 2 saying authentication failed for %s", code, stderr, reg.Host)
	}
	_, stderr, code = runKubepact(t, "check", ref, "--plain-http")
	if code != 2 || !strings.Contains(strings.ToLower(stderr), "auth") {
		t.Errorf("check without credentials: exit %d, stderr %q; want an authentication error", code, stderr)
	}
}

func TestPushRefusesInvalidBundles(t *testing.T) {
	reg := testregistry.New(t, nil)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte("pactoVersion: \"2.0\"\nservice:\n  name: Bad_Name\n  version: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runKubepact(t, "push", dir, "oci://"+reg.Host+"/bad:1.0.0", "--plain-http")
	if code != 1 || !strings.Contains(stderr, "not pushing") || !strings.Contains(stderr, "SCHEMA_VIOLATION") {
		t.Errorf("push of an invalid bundle: exit %d, stderr %q", code, stderr)
	}
	for _, r := range reg.Requests() {
		if r.Method == http.MethodPut {
			t.Errorf("an invalid bundle reached the registry: %s", r)
		}
	}
	_, stderr, code = runKubepact(t, "push", dir, reg.Host+"/bad:1.0.0")
	if code != 2 || !strings.Contains(stderr, "not a registry reference") {
		t.Errorf("push to a bare reference: exit %d, stderr %q", code, stderr)
	}
}

// TestPushRefusesLocalRefs: file:// and bare-path refs are for development;
// once pushed they name directories on the publisher's machine, which no
// consumer can follow (a pulled bundle never follows local refs, so a local
// policy ref then fails closed everywhere). push refuses them, as Pacto's
// does, before anything reaches the registry.
func TestPushRefusesLocalRefs(t *testing.T) {
	reg := testregistry.New(t, nil)
	base := "pactoVersion: \"2.0\"\nservice:\n  name: svc\n  version: 1.0.0\n"
	tests := []struct {
		name, contract, wantPath string
	}{
		{"dependency bare path", base + "dependencies:\n  - name: orders\n    ref: ../orders\n    required: true\n    compatibility: ^1.0.0\n", "dependencies[0].ref"},
		{"dependency file URL", base + "dependencies:\n  - name: orders\n    ref: file://../orders\n    required: false\n    compatibility: ^1.0.0\n", "dependencies[0].ref"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(tt.contract), 0o644); err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runKubepact(t, "push", dir, "oci://"+reg.Host+"/svc:1.0.0", "--plain-http")
			if code != 1 || !strings.Contains(stderr, "not pushing") || !strings.Contains(stderr, tt.wantPath) {
				t.Errorf("push of a bundle with a local ref: exit %d, stderr %q; want exit 1 naming %s", code, stderr, tt.wantPath)
			}
		})
	}
	for _, r := range reg.Requests() {
		if r.Method == http.MethodPut {
			t.Errorf("a bundle with local refs reached the registry: %s", r)
		}
	}
}
