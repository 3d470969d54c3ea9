//go:build sidecaronly

package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// executeInProcess runs the command tree of this test binary (the slim
// sidecar build) with args and returns its output and error.
func executeInProcess(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(t.Context())
	return out.String(), err
}

// TestSlimHelpListsSidecarAndVersion: the slim build's help offers the
// two commands it runs and none of the full binary's others.
func TestSlimHelpListsSidecarAndVersion(t *testing.T) {
	out, err := executeInProcess(t, "--help")
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	commands := map[string]bool{}
	listing := false
	for line := range strings.Lines(out) {
		switch {
		case strings.HasPrefix(line, "Available Commands:"):
			listing = true
		case listing && strings.TrimSpace(line) == "":
			listing = false
		case listing:
			commands[strings.Fields(line)[0]] = true
		}
	}
	for _, want := range []string{"sidecar", "version"} {
		if !commands[want] {
			t.Errorf("help lists no %q command:\n%s", want, out)
		}
	}
	for _, name := range fullOnly {
		if commands[name] {
			t.Errorf("help of the slim build lists %q, which it does not run:\n%s", name, out)
		}
	}
}

// TestSlimRefusesTheOtherShapes: each command of the full binary is a
// usage error (exit 2) that names the binary to run instead, in process
// and as the built slim binary; none runs anything.
func TestSlimRefusesTheOtherShapes(t *testing.T) {
	for _, name := range fullOnly {
		t.Run(name, func(t *testing.T) {
			out, err := executeInProcess(t, name, "--help")
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(ee.msg, "not in this build") || !strings.Contains(ee.msg, "kubepact "+name) {
				t.Errorf("%s in process: %v (output %q); want exit 2 saying it is not in this build", name, err, out)
			}
			stdout, stderr, code := runKubepact(t, name, "--help")
			if code != 2 || !strings.Contains(stderr, "not in this build") || stdout != "" {
				t.Errorf("%s as a process: exit %d, stdout %q, stderr %q; want 2 and only the refusal", name, code, stdout, stderr)
			}
		})
	}
}

// TestSlimSidecarFlags: the sidecar's flags in the slim build are the
// full build's (help names them), and its refusals hold in process.
func TestSlimSidecarFlags(t *testing.T) {
	out, err := executeInProcess(t, "sidecar", "--help")
	if err != nil {
		t.Fatalf("sidecar --help: %v\n%s", err, out)
	}
	for _, flag := range []string{"--bundle", "--upstream", "--health-addr", "--memory-limit-mib"} {
		if !strings.Contains(out, flag) {
			t.Errorf("sidecar --help names no %s:\n%s", flag, out)
		}
	}
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: []string{"--bundle", catalog, "--upstream", "http://10.1.2.3:8080"}, want: "is not loopback"},
		{args: []string{"--upstream", "http://127.0.0.1:8080"}, want: "--bundle is required"},
		{args: []string{"--bundle", catalog, "--no-such-flag"}, want: "unknown flag"},
	} {
		_, err := executeInProcess(t, append([]string{"sidecar", "--health-addr", "127.0.0.1:0"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sidecar %v: %v; want an error with %q", tc.args, err, tc.want)
		}
	}
}
