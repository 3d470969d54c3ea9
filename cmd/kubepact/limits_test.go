//go:build !sidecaronly

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/test/testregistry"
)

// TestLimitFlags: each command that loads a bundle takes the three limit
// flags; a refusal names the limit, the size and the flag that raises it,
// and a raised limit lets the same bundle through.
func TestLimitFlags(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"check file", []string{"check", catalog, "--max-file-bytes", "1024"},
			[]string{"exceeds the per-file limit of 1024 bytes", "size ", "--max-file-bytes"}},
		{"check total", []string{"check", catalog, "--max-total-bytes", "2048"},
			[]string{"exceed the total limit of 2048 bytes", "contents of at least", "--max-total-bytes"}},
		{"check entries", []string{"check", catalog, "--max-entries", "2"},
			[]string{"more than 2 entries", "--max-entries"}},
		{"pack", []string{"pack", catalog, "-o", filepath.Join(t.TempDir(), "l.tgz"), "--max-file-bytes", "1024"},
			[]string{"exceeds the per-file limit of 1024 bytes", "--max-file-bytes"}},
		{"push", []string{"push", catalog, "oci://127.0.0.1:1/x/catalog:1", "--max-file-bytes", "1024"},
			[]string{"exceeds the per-file limit of 1024 bytes", "--max-file-bytes"}},
		{"mcp", []string{"mcp", catalog, "--max-file-bytes", "1024"},
			[]string{"exceeds the per-file limit of 1024 bytes", "--max-file-bytes"}},
		{"sidecar", []string{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:1", "--max-file-bytes", "1024", "--health-addr", "127.0.0.1:0", "--port", "0"},
			[]string{"exceeds the per-file limit of 1024 bytes", "--max-file-bytes"}},
		{"zero", []string{"check", catalog, "--max-entries", "0"},
			[]string{"--max-entries 0: want a positive number (default 10000)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runKubepact(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d; want 2\n%s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	if _, stderr, code := runKubepact(t, "check", catalog, "--max-file-bytes", "1048576", "--max-total-bytes", "4194304", "--max-entries", "100"); code != 0 {
		t.Errorf("check within raised/lowered limits: exit %d\n%s", code, stderr)
	}
}

// TestLimitFlagsPulled: a bundle past Pacto's 10 MiB per-file limit is
// pushed with the limit raised; pulled back, it is refused at the default
// limit (naming the flag) and accepted when the limit is raised there too.
func TestLimitFlagsPulled(t *testing.T) {
	reg := testregistry.New(t, nil)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte("pactoVersion: \"2.0\"\nservice:\n  name: big\n  version: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), bytes.Repeat([]byte("0123456789abcdef"), 11<<16), 0o644); err != nil { // 11 MiB
		t.Fatal(err)
	}
	ref := "oci://" + reg.Host + "/big:1.0.0"
	if _, stderr, code := runKubepact(t, "push", dir, ref, "--plain-http"); code != 2 || !strings.Contains(stderr, "--max-file-bytes") {
		t.Errorf("push at the default limit: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runKubepact(t, "push", dir, ref, "--plain-http", "--max-file-bytes", "16777216"); code != 0 {
		t.Fatalf("push with the limit raised: exit %d\n%s", code, stderr)
	}
	_, stderr, code := runKubepact(t, "check", ref, "--plain-http", "--no-cache")
	if code != 2 || !strings.Contains(stderr, "size 11534336 bytes exceeds the per-file limit of 10485760 bytes") || !strings.Contains(stderr, "--max-file-bytes") {
		t.Errorf("check of the pulled bundle at the default limit: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runKubepact(t, "check", ref, "--plain-http", "--no-cache", "--max-file-bytes", "16777216"); code != 0 {
		t.Errorf("check of the pulled bundle with the limit raised: exit %d\n%s", code, stderr)
	}
}
