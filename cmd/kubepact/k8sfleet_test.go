//go:build !sidecaronly

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/test/freeport"
)

// TestMCPK8sRefusesBadFlags: the --k8s flags are checked before anything
// connects to a cluster.
func TestMCPK8sRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--namespace", "shop"}, "add --k8s"},
		{[]string{"--k8s", "--local", "."}, "cannot be combined"},
		{[]string{"--k8s", "--namespace", "a,,b"}, "empty namespace"},
		{[]string{"--k8s", "--kubeconfig", filepath.Join(t.TempDir(), "missing")}, "--kubeconfig"},
	} {
		_, stderr, code := runKubepact(t, append([]string{"mcp", "-t", "http", "--port", "0"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("mcp %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestMCPK8sWithoutTheCRD runs `kubepact mcp --fleet --k8s` as a process
// against a real kube-apiserver where the ServiceContract CRD is not
// installed, only Pacto's: its CRs are the fleet, seen by an MCP client
// over HTTP, and every answer says ServiceContracts are missing.
func TestMCPK8sWithoutTheCRD(t *testing.T) {
	env, cfg := startControlPlane(t, "fleetgraph", "kube", "testdata")
	admin, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigFile := adminKubeconfig(t, env, "laptop-user")
	if err := admin.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pacto.trianalab.io/v1alpha1", "kind": "Pacto",
		"metadata": map[string]any{"namespace": "shop", "name": "orders"}, "spec": map[string]any{}}}
	if err := admin.Create(t.Context(), cr); err != nil {
		t.Fatal(err)
	}
	cr.Object["status"] = map[string]any{"contractStatus": "Warning", "contract": map[string]any{"serviceName": "orders"}}
	if err := admin.Status().Update(t.Context(), cr); err != nil {
		t.Fatal(err)
	}

	port := freeport.Port(t)
	p := &sidecarProc{}
	p.launch(t, []string{"mcp", "-t", "http", "--port", strconv.Itoa(port), "--families", "fleet",
		"--fleet", "--k8s", "--kubeconfig", kubeconfigFile, "--namespace", "shop"}, "kubepact mcp listening", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "laptop", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_get", Arguments: map[string]any{"service": "orders"}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(res.StructuredContent)
		s := string(got)
		if strings.Contains(s, `"kind":"kubernetes"`) && strings.Contains(s, `"compliance":"Warning"`) &&
			strings.Contains(s, `"SERVICE_CONTRACTS_MISSING"`) && strings.Contains(s, `"completeness":"partial"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pacto_fleet_get orders: %s\n%s", s, p.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestKubeconfigInWords: with no cluster configuration to find, or a
// kubeconfig that is not one, `kubepact operator` and `kubepact mcp --k8s`
// say where they looked and what to do, never client-go's "invalid
// configuration: … try setting KUBERNETES_MASTER environment variable"
// (a variable kubepact does not read) or its "error loading config file";
// and one interrupted while it waits for an API server that does not
// answer says it was stopped, not "context canceled".
func TestKubeconfigInWords(t *testing.T) {
	home := t.TempDir()
	bad := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(bad, []byte("clusters: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing")
	homeFile := filepath.Join(home, ".kube", "config")
	run := func(env []string, args ...string) (string, int) {
		cmd := exec.CommandContext(t.Context(), kubepactBin, args...)
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "KUBECONFIG=") }),
			append([]string{"HOME=" + home, "KUBEPACT_CACHE_DIR=" + t.TempDir()}, env...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("running kubepact %v: %v", args, err)
		}
		return errb.String(), cmd.ProcessState.ExitCode()
	}
	for _, command := range [][]string{{"operator", "--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:0"}, {"mcp", "--k8s"}} {
		for _, tc := range []struct {
			name string
			env  []string
			args []string
			want string
		}{
			{"nothing to find", nil, nil, "kubepact: no Kubernetes configuration found: this is not a Pod in a cluster, $KUBECONFIG is not set, and " + homeFile + " does not exist: pass --kubeconfig FILE, or set KUBECONFIG"},
			{"KUBECONFIG names a missing file", []string{"KUBECONFIG=" + missing}, nil, "kubepact: no Kubernetes configuration found: this is not a Pod in a cluster, $KUBECONFIG names " + missing + ", which does not exist: pass --kubeconfig FILE, or set KUBECONFIG"},
			{"not a kubeconfig", nil, []string{"--kubeconfig", bad}, "kubepact: --kubeconfig " + bad + " is not a kubeconfig file kubepact can read (yaml: line 1: did not find expected node content): check it with kubectl --kubeconfig " + bad + " config view"},
		} {
			t.Run(command[0]+" "+tc.name, func(t *testing.T) {
				stderr, code := run(tc.env, append(slices.Clone(command), tc.args...)...)
				if code != 2 || !strings.Contains(stderr, tc.want) {
					t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
				}
				for _, raw := range []string{"KUBERNETES_MASTER", "KUBERNETES_SERVICE_HOST", "invalid configuration", "error loading config file"} {
					if strings.Contains(stderr, raw) {
						t.Errorf("stderr %q carries client-go's text %q", stderr, raw)
					}
				}
			})
		}
	}

	// An API server that accepts connections and never answers: the first
	// list waits, and a signal during the wait stops the process.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, fmt.Appendf(nil, "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://%s\"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: t}\n", ln.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), kubepactBin, "mcp", "--k8s", "--kubeconfig", kc, "--workspace", t.TempDir())
	cmd.Env = append(os.Environ(), "HOME="+home, "KUBEPACT_CACHE_DIR="+t.TempDir())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdin, err := cmd.StdinPipe() // held open: the server must not end for want of input
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // it is waiting for the first list (a minute at most)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := strings.TrimSpace(errb.String()); !strings.HasSuffix(got, "kubepact: stopped by a signal before it was ready") || strings.Contains(got, "context canceled") {
		t.Errorf("interrupted while waiting for the cluster, it said %q; want it to say it was stopped", got)
	}
}
