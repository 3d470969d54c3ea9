//go:build !sidecaronly

package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// assertReleaseBinary fails unless path is a release build: statically
// linked (no program interpreter, no dynamic section) and stripped (no
// symbol table, no DWARF). It logs the size.
func assertReleaseBinary(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v); want a static binary (CGO_ENABLED=0)", path, p.Type)
		}
	}
	for _, s := range f.Sections {
		if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			t.Errorf("%s holds section %s; want it stripped (-ldflags \"-s -w\")", path, s.Name)
		}
	}
	if st, err := os.Stat(path); err == nil {
		t.Logf("%s: %.1f MB", filepath.Base(path), float64(st.Size())/1e6)
	}
}

// TestReleaseBuilds: `make build` writes a static, stripped kubepact and
// kubepact-sidecar that run and say their version, and so is the binary
// these tests run (built by test/gobuild with the same flags).
func TestReleaseBuilds(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "make", "build", "LOCALBIN="+dir, "VERSION=v0.0.0-buildtest")
	cmd.Dir = repoRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	// bin/kubepact-sidecar is the slim sidecar build (-tags sidecaronly),
	// stamped with the same version.
	for _, name := range []string{"kubepact", "kubepact-sidecar"} {
		bin := filepath.Join(dir, name)
		assertReleaseBinary(t, bin)
		if out, err := exec.CommandContext(t.Context(), bin, "version").Output(); err != nil || string(out) != "kubepact v0.0.0-buildtest\n" {
			t.Errorf("%s version: %q %v", bin, out, err)
		}
	}
	assertReleaseBinary(t, kubepactBin)
}
