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

	"github.com/kubepact/kubepact/internal/testregistry"
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
