package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubepact/kubepact/test/gobuild"
)

// TestOperatorAcceptsChartArgs runs the real kubepact binary with the
// arguments and environment the chart's Deployment gives it (GOMEMLIMIT
// included, which the Go runtime parses at start): every flag must pass
// the operator's validation, so the only failure left is reaching a
// cluster, through a kubeconfig that does not exist.
func TestOperatorAcceptsChartArgs(t *testing.T) {
	needHelm(t)
	bin := filepath.Join(t.TempDir(), "kubepact")
	build := gobuild.Command(filepath.Join("..", ".."), bin, "./cmd/kubepact")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/kubepact: %v\n%s", err, out)
	}
	for name, args := range map[string][]string{"defaults": nil, "all-options": {"-f", allOptions}} {
		t.Run(name, func(t *testing.T) {
			deploy := find(render(t, args...), "Deployment", "kubepact-operator")
			argv := containerArgs(t, deploy)
			// The token file is a mounted Secret in the cluster; here a file.
			for i, a := range argv {
				if v, ok := strings.CutPrefix(a, "--auth-token-file="); ok {
					tok := filepath.Join(t.TempDir(), filepath.Base(v))
					if err := os.WriteFile(tok, []byte("s3cret-token-for-the-test\n"), 0o600); err != nil {
						t.Fatal(err)
					}
					argv[i] = "--auth-token-file=" + tok
				}
			}
			const kubeconfig = "/nonexistent/kubeconfig"
			cmd := exec.CommandContext(t.Context(), bin, append(argv, "--kubeconfig="+kubeconfig)...)
			cmd.Env = append(containerEnv(t, deploy), "HOME="+t.TempDir(), "PATH="+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the operator ran without a cluster:\n%s", out)
			}
			if !strings.Contains(string(out), "--kubeconfig "+kubeconfig) {
				t.Fatalf("the operator refused the chart's arguments %q before reaching for the cluster:\n%s", argv, out)
			}
		})
	}
}

// containerEnv is the operator container's environment with the values the
// kubelet would resolve (the Pod's namespace) filled in.
func containerEnv(t *testing.T, deploy *unstructured.Unstructured) []string {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	var env []string
	for _, e := range cs[0].(map[string]any)["env"].([]any) {
		e := e.(map[string]any)
		name := e["name"].(string)
		switch v, ok := e["value"].(string); {
		case ok:
			env = append(env, name+"="+v)
		case name == "POD_NAMESPACE":
			env = append(env, name+"="+releaseNS)
		default:
			t.Fatalf("env %s has neither a value nor a known reference: %v", name, e)
		}
	}
	return env
}
