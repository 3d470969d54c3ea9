//go:build !sidecaronly

package main

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/internal/sidecar"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/grpcdemo"
)

// TestInjectedGRPCSidecar runs what the webhook writes for a Pod of the
// gRPC example (a ConfigMap bundle, as TestInjectedConfigMapSidecar lays
// it out) whose kubepact.dev/grpc-port names the demo gRPC service: the
// real sidecar process calls the service at --grpc-target, and the tool
// surface it reports is the one the operator records for the contract
// (computed without the Pod's target), so the Pod's
// kubepact.dev/tool-surface is true for a gRPC sidecar too.
func TestInjectedGRPCSidecar(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(repoRoot(t), "examples", "grpc", "inventory")
	svc, err := grpcdemo.Serve(t.Context(), lis, os.DirFS(filepath.Join(example, "interfaces", "inventory", "v1")), "inventory.proto")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Stop)
	_, grpcPort, _ := net.SplitHostPort(svc.Addr)

	layerFile := filepath.Join(t.TempDir(), v1alpha1.ConfigMapBundleKey)
	if _, stderr, code := runKubepact(t, "pack", example, "-o", layerFile); code != 0 {
		t.Fatalf("pack: exit %d: %s", code, stderr)
	}
	layer, err := os.ReadFile(layerFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadLayer(layer, nil)
	if err != nil {
		t.Fatal(err)
	}
	digest := string(b.Identity)
	// What the reconciler records for it: the grpc interface, and the
	// surface of the configuration it computes with (no target).
	recorded, err := sidecar.ToolSurface(t.Context(), injection.SidecarOptions{}.Config("/var/run/kubepact/bundle/bundle.tar.gz", digest, 8080), b)
	if err != nil {
		t.Fatal(err)
	}
	sc := &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "inventory"},
		Spec:       v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{ConfigMapRef: &v1alpha1.LocalObjectReference{Name: "inventory-bundle"}}},
		Status: v1alpha1.ServiceContractStatus{ResolvedRef: "configmap/inventory-bundle", Digest: digest, ToolSurfaceDigest: recorded,
			Contract: &v1alpha1.ContractSummary{Service: "inventory", GRPCInterface: "grpc"}},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{injection.AnnotationContract: "inventory", injection.AnnotationGRPCPort: grpcPort}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "inventory", Image: "example.invalid/inventory:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}},
	}
	mcpPort, healthPort := freeport.Port(t), freeport.Port(t)
	inj, err := injection.BuildSidecar(sc, pod, injection.SidecarOptions{MCPPort: int32(mcpPort), HealthPort: int32(healthPort)})
	if err != nil {
		t.Fatal(err)
	}
	if want := "--grpc-target=127.0.0.1:" + grpcPort; !slices.Contains(inj.Container.Args, want) || inj.GRPCPortSource != injection.PortFromAnnotation {
		t.Fatalf("args %q (port from %q): want %s from the annotation", inj.Container.Args, inj.GRPCPortSource, want)
	}
	mount := t.TempDir()
	if err := os.WriteFile(filepath.Join(mount, v1alpha1.ConfigMapBundleKey), layer, 0o444); err != nil {
		t.Fatal(err)
	}
	mountPath := inj.Container.VolumeMounts[0].MountPath
	var args []string
	for _, a := range inj.Container.Args {
		if rest, ok := strings.CutPrefix(a, "--bundle="+mountPath+"/"); ok {
			a = "--bundle=" + filepath.Join(mount, rest)
		}
		args = append(args, a)
	}
	t.Logf("kubepact %s", strings.Join(args, " "))
	p := launchSidecar(t, args, mcpPort, healthPort)
	res, err := p.connect(t).CallTool(t.Context(), &sdk.CallToolParams{Name: "Inventory_GetItem", Arguments: map[string]any{"sku": "LMP-3"}})
	if err != nil || res.IsError {
		t.Fatalf("Inventory_GetItem through the injected sidecar: %v %+v\n%s", err, res, p.stderr)
	}
	if n := svc.Calls("GetItem"); n != 1 {
		t.Errorf("the gRPC service got %d GetItem calls, want 1", n)
	}
	got := readyDetailsOf(t, p.health)
	if got.BundleDigest != digest || got.ToolSurfaceDigest != recorded || inj.ToolSurface != recorded {
		t.Errorf("/readyz?verbose = %+v, Pod's tool surface %q; want bundle %s and the recorded tool surface %s", got, inj.ToolSurface, digest, recorded)
	}
	if !strings.HasPrefix(recorded, "sha256:") {
		t.Errorf("recorded surface %q, want a digest", recorded)
	}
}
