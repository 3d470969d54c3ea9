package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorRefusesBadFlags: a bad flag is a clear error (exit 2) before
// anything connects to a cluster.
func TestOperatorRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-concurrent-reconciles", "0"}, "use 1 to 64"},
		{[]string{"--namespace", "a,,b"}, "empty namespace"},
		{[]string{"--graceful-shutdown-timeout", "-1s"}, "negative"},
		{[]string{"--kubeconfig", filepath.Join(t.TempDir(), "missing")}, "--kubeconfig"},
	} {
		_, stderr, code := runKubepact(t, append([]string{"operator", "--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("operator %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
