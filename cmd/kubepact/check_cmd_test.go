//go:build !sidecaronly

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/test/freeport"
)

func TestCheckExamples(t *testing.T) {
	examples, err := filepath.Glob(filepath.Join(repoRoot(t), "examples", "bundles", "*"))
	if err != nil || len(examples) < 3 {
		t.Fatalf("expected at least 3 example bundles, got %v (%v)", examples, err)
	}
	for _, dir := range examples {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out, stderr, code := runKubepact(t, "check", dir, "-o", "json")
			if code != 0 {
				t.Fatalf("check %s: exit %d\nstdout: %s\nstderr: %s", dir, code, out, stderr)
			}
			var rep checkReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("check -o json output is not the report: %v\n%s", err, out)
			}
			if !rep.Valid || rep.Service != filepath.Base(dir) || !strings.HasPrefix(rep.Identity, "sha256:") {
				t.Errorf("report = %+v; want valid, service %q and a sha256 identity", rep, filepath.Base(dir))
			}
		})
	}
}

func TestCheckInvalid(t *testing.T) {
	dir := t.TempDir()
	contract := "pactoVersion: \"2.0\"\nservice:\n  name: broken\n  version: 1.0.0\ninterfaces:\n  - name: api\n    type: openapi\n    ref: interfaces/missing.yaml\n"
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}

	out, _, code := runKubepact(t, "check", dir, "-o", "json")
	if code != 1 {
		t.Fatalf("check of an invalid bundle: exit %d, want 1\n%s", code, out)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	errs, _ := raw["errors"].([]any)
	if len(errs) == 0 {
		t.Fatalf("no errors reported: %s", out)
	}
	first, _ := errs[0].(map[string]any)
	if first["code"] != "FILE_NOT_FOUND" || first["path"] != "interfaces[0].ref" || first["message"] == "" {
		t.Errorf("first finding = %v; want FILE_NOT_FOUND at interfaces[0].ref with a message", first)
	}
	if _, ok := raw["warnings"].([]any); !ok {
		t.Errorf("warnings must be a list, even when empty: %s", out)
	}

	text, _, code := runKubepact(t, "check", dir)
	if code != 1 || !strings.Contains(text, "INVALID") || !strings.Contains(text, "FILE_NOT_FOUND") {
		t.Errorf("text check: exit %d, output %q", code, text)
	}
}

func TestCheckCannotCheck(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"check", filepath.Join(t.TempDir(), "nope")}, "does not exist"},
		{[]string{"check", t.TempDir()}, "has no pacto.yaml"},
		{[]string{"check", ".", "-o", "yaml"}, `-o "yaml" is not accepted`},
		{[]string{"check", "oci://"}, ""},
	}
	for _, tt := range tests {
		_, stderr, code := runKubepact(t, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("kubepact %v: exit %d, stderr %q; want exit 2 mentioning %q", tt.args, code, stderr, tt.want)
		}
	}
}

func TestPackReproducible(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "examples", "bundles", "payments")
	out1 := filepath.Join(t.TempDir(), "a.tar.gz")
	out2 := filepath.Join(t.TempDir(), "b.tar.gz")

	d1, stderr, code := runKubepact(t, "pack", dir, "-o", out1)
	if code != 0 {
		t.Fatalf("pack: exit %d: %s", code, stderr)
	}
	d2, _, _ := runKubepact(t, "pack", dir, "-o", out2)
	b1, _ := os.ReadFile(out1)
	b2, _ := os.ReadFile(out2)
	if d1 != d2 || !bytes.Equal(b1, b2) || len(b1) == 0 {
		t.Fatalf("pack is not reproducible: digests %q vs %q, %d vs %d bytes", d1, d2, len(b1), len(b2))
	}

	checkOut, _, _ := runKubepact(t, "check", dir, "-o", "json")
	var rep checkReport
	if err := json.Unmarshal([]byte(checkOut), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Identity != strings.TrimSpace(d1) {
		t.Errorf("check reports identity %s, pack %s: one bundle, one identity", rep.Identity, d1)
	}

	if _, stderr, code := runKubepact(t, "pack", dir); code != 2 || !strings.Contains(stderr, "-o FILE") {
		t.Errorf("pack without -o: exit %d, %q", code, stderr)
	}
}

// TestCheckUnreachableRegistryExits2: a configuration or policy ref whose
// registry does not answer is "could not check" (exit 2, REF_UNREACHABLE),
// not an invalid contract (exit 1).
func TestCheckUnreachableRegistryExits2(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freeport.Port(t)) // nothing listens there
	dir := t.TempDir()
	contract := "pactoVersion: \"2.0\"\nservice: {name: probe, version: 1.0.0}\n" +
		"configurations: [{name: shared, required: true, ref: oci://" + addr + "/acme/config:1.0.0}]\n" +
		"policies: [{name: base, ref: oci://" + addr + "/acme/policy:1.0.0}]\n"
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	// The registry is named: it is its silence, not the registry policy,
	// that is checked here.
	out, stderr, code := runKubepact(t, "check", dir, "--plain-http", "--allowed-registries", addr, "-o", "json")
	if code != 2 {
		t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	var rep checkReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not a report: %v\n%s", err, out)
	}
	if rep.Valid || !rep.CouldNotCheck || len(rep.Errors) != 2 {
		t.Fatalf("report %+v", rep)
	}
	for _, f := range rep.Errors {
		if f.Code != "REF_UNREACHABLE" || !strings.Contains(f.Message, "nothing accepts connections at registry "+addr) || strings.Contains(f.Message, "dial tcp") {
			t.Errorf("finding %+v, want REF_UNREACHABLE saying nothing accepts connections, in our words", f)
		}
	}
	out, _, code = runKubepact(t, "check", dir, "--plain-http", "--allowed-registries", addr)
	if code != 2 || !strings.Contains(out, "COULD NOT CHECK") || strings.Contains(out, "INVALID") {
		t.Errorf("text report (exit %d):\n%s", code, out)
	}
}
