package injection_test

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/test/envtestsuite"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestInjectGRPCTargetAndToolMode: through the API server, a Pod of a
// contract with a grpc interface (examples/grpc/inventory) gets its sidecar
// with --grpc-target on loopback at the port its annotation or its port
// named grpc says, and the tool mode it asks for. A hostile or careless
// Pod author's port or mode that is not one leaves the Pod without its
// sidecar, saying why (refused under inject-policy required), and never
// touches an ordinary Pod.
func TestInjectGRPCTargetAndToolMode(t *testing.T) {
	needWebhook(t)
	ns := injectionNamespace(t, true)
	reg := testregistry.New(t, nil)
	ref := reg.Host + "/bundles/inventory:1.0.0"
	envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), filepath.Join("..", "..", "examples", "grpc", "inventory"), ref)
	suite.Create(t, deployment(ns, "inventory", 0, nil))
	suite.Create(t, envtestsuite.NewContract(ns, "inventory", "oci://"+ref, "inventory"))
	sc := suite.WaitFor(t, client.ObjectKey{Namespace: ns, Name: "inventory"}, "Ready", envtestsuite.IsReady)
	if sc.Status.Contract == nil || sc.Status.Contract.GRPCInterface != "grpc" {
		t.Fatalf("status.contract %+v: want grpcInterface grpc", sc.Status.Contract)
	}
	c, warns := warningClient(t)
	admit := func(name string, ann map[string]string, ports ...corev1.ContainerPort) (*corev1.Pod, error) {
		t.Helper()
		pod := restrictedPod(ns, name, ann)
		if len(ports) > 0 {
			pod.Spec.Containers[0].Ports = ports
		}
		warns.reset()
		err := c.Create(t.Context(), pod, client.DryRunAll)
		return pod, err
	}
	arg := func(pod *corev1.Pod, flag string) (string, bool) {
		s := sidecarOf(pod)
		if s == nil {
			return "", false
		}
		for _, a := range s.Args {
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				return v, true
			}
		}
		return "", false
	}

	pod, err := admit("by-annotation", map[string]string{injection.AnnotationContract: "inventory", injection.AnnotationGRPCPort: "9090", injection.AnnotationToolMode: "discover"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := arg(pod, "--grpc-target"); v != "127.0.0.1:9090" {
		t.Errorf("sidecar %+v: --grpc-target %q, want 127.0.0.1:9090", sidecarOf(pod), v)
	}
	if v, _ := arg(pod, "--tool-mode"); v != "discover" {
		t.Errorf("sidecar args %q: --tool-mode %q, want discover", sidecarOf(pod).Args, v)
	}
	if got := pod.Annotations[injection.AnnotationGRPCPortSource]; got != injection.PortFromAnnotation {
		t.Errorf("annotation %s=%q, want %q", injection.AnnotationGRPCPortSource, got, injection.PortFromAnnotation)
	}
	var discover string
	for _, s := range sc.Status.ToolSurfaces {
		if s.Mode == "discover" {
			discover = s.Digest
		}
	}
	if got := pod.Annotations[injection.AnnotationToolSurface]; discover == "" || got != discover || got == sc.Status.ToolSurfaceDigest {
		t.Errorf("a discover-mode Pod was given the tool surface %q; want mode discover's %q (status.toolSurfaces %+v), not mode all's", got, discover, sc.Status.ToolSurfaces)
	}

	pod, err = admit("by-port-name", map[string]string{injection.AnnotationContract: "inventory"},
		corev1.ContainerPort{Name: "grpc", ContainerPort: 9443})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := arg(pod, "--grpc-target"); v != "127.0.0.1:9443" || pod.Annotations[injection.AnnotationGRPCPortSource] != injection.PortFromContainer+"catalog" {
		t.Errorf("a Pod whose port is named grpc: --grpc-target %q from %q; want 127.0.0.1:9443 from container:catalog", v, pod.Annotations[injection.AnnotationGRPCPortSource])
	}
	if _, ok := arg(pod, "--tool-mode"); ok || pod.Annotations[injection.AnnotationToolSurface] != sc.Status.ToolSurfaceDigest {
		t.Errorf("default mode: args %q, tool surface %q; want no --tool-mode and the contract's surface %s", sidecarOf(pod).Args, pod.Annotations[injection.AnnotationToolSurface], sc.Status.ToolSurfaceDigest)
	}

	// No port anywhere: injected, the gRPC tools listed and not callable,
	// and the author is told.
	pod, err = admit("no-port", map[string]string{injection.AnnotationContract: "inventory"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := arg(pod, "--grpc-target"); ok || sidecarOf(pod) == nil || !warns.contains("set the annotation kubepact.dev/grpc-port") {
		t.Errorf("a Pod with no gRPC port: sidecar %+v, warnings %q; want a sidecar without --grpc-target and a warning naming the annotation", sidecarOf(pod), warns.all())
	}

	// What is not a port or a mode: admitted without the sidecar, saying
	// what is accepted; refused when the Pod requires its sidecar.
	for _, bad := range []struct{ key, value, says string }{
		{injection.AnnotationGRPCPort, "grpc", "want a port number from 1 to 65535"},
		{injection.AnnotationGRPCPort, "99999", "want a port number from 1 to 65535"},
		{injection.AnnotationGRPCPort, strings.Repeat("7", 4096), "want a port number from 1 to 65535"},
		{injection.AnnotationToolMode, "everything", "want all (one tool per operation), discover"},
	} {
		pod, err := admit("bad", map[string]string{injection.AnnotationContract: "inventory", bad.key: bad.value})
		if err != nil || sidecarOf(pod) != nil || !warns.contains(bad.says) || !warns.contains("admitted without the sidecar") {
			t.Errorf("%s=%.20q: err %v, sidecar %v, warnings %q; want admitted without the sidecar, saying %q", bad.key, bad.value, err, sidecarOf(pod) != nil, warns.all(), bad.says)
		}
		_, err = admit("bad-required", map[string]string{injection.AnnotationContract: "inventory", bad.key: bad.value, injection.AnnotationInjectPolicy: injection.InjectPolicyRequired})
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s=%.20q, inject-policy required: %v; want a refusal saying %q", bad.key, bad.value, err, bad.says)
		}
	}

	// A contract without a grpc interface: the annotation is ignored, with
	// a warning; the sidecar is the ordinary one.
	catalog, _ := readyContract(t, ns, "catalog")
	pod, err = admit("catalog-grpc-port", map[string]string{injection.AnnotationContract: catalog.Name, injection.AnnotationGRPCPort: "9090"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := arg(pod, "--grpc-target"); ok || sidecarOf(pod) == nil || !warns.contains("declares no grpc interface") {
		t.Errorf("catalog with a gRPC port: sidecar %+v, warnings %q; want the sidecar without --grpc-target, and the annotation ignored with a warning", sidecarOf(pod), warns.all())
	}
}
