package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/test/gobuild"
)

// kubepactBin is the binary built once for every test in this package: the
// commands are tested as users run them, as a process with flags and exit
// codes.
var kubepactBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubepact-bin-")
	if err != nil {
		panic(err)
	}
	kubepactBin = filepath.Join(dir, "kubepact")
	// Every process a test starts inherits this unless the test names its
	// own: a --local fleet or a pull writes its cache there, never under
	// the user's cache directory.
	if err := os.Setenv("KUBEPACT_CACHE_DIR", filepath.Join(dir, "cache")); err != nil {
		panic(err)
	}
	build := gobuild.Tags(gobuild.Command("", kubepactBin, "."), testBuildTags...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building kubepact: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs the binary and returns stdout, stderr and the exit code.
func runKubepact(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), kubepactBin, args...)
	cmd.Env = append(os.Environ(), "KUBEPACT_CACHE_DIR="+t.TempDir(), "HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running kubepact %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func TestVersion(t *testing.T) {
	out, _, code := runKubepact(t, "version")
	if code != 0 || !strings.HasPrefix(out, "kubepact ") {
		t.Fatalf("version: code %d, output %q", code, out)
	}
}
