package main

import (
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

	port := freePort(t)
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
