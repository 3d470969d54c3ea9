//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// annotationGRPCPortSource is where the webhook says the gRPC port came
// from (spelled out, as the story's other names are).
const annotationGRPCPortSource = "kubepact.dev/grpc-port-source"

// grpcServiceGetsSidecar: the gRPC example (examples/grpc/inventory) as a
// user deploys it — its bundle pushed, a ServiceContract, a Deployment of
// the demo gRPC service in the injection-enabled namespace whose container
// names its port grpc — gets the sidecar with --grpc-target on the Pod's
// loopback, and real MCP clients (Go, and the TypeScript SDK's) list the
// gRPC tools and call one through it, reaching the service.
func (s *story) grpcServiceGetsSidecar(t *testing.T) {
	app, why := s.b.grpcContainer(t)
	if why != "" {
		t.Skipf("the gRPC example with its sidecar: not run on this back end: %s", why)
	}
	c := s.b.admin()
	_, pull := s.b.registry()
	digest := s.push(t, filepath.Join(repoRoot(), "examples", "grpc", "inventory"), "bundles/inventory:e2e")
	labels := map[string]string{"app": "inventory"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.shop, Name: "inventory"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{annotationContract: "inventory"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{app}},
			},
		},
	}
	sc := &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.shop, Name: "inventory"},
		Spec: v1alpha1.ServiceContractSpec{
			Bundle:    v1alpha1.BundleSource{OCI: "oci://" + pull + "/bundles/inventory:e2e"},
			TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "inventory"},
		},
	}
	for _, o := range []client.Object{d, sc} {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
	}
	// Gone again after the step: the story's later steps count shop's
	// services and Pods.
	t.Cleanup(func() {
		for _, o := range []client.Object{d, sc} {
			if err := c.Delete(s.root.Context(), o); client.IgnoreNotFound(err) != nil {
				t.Logf("deleting %s: %v", o.GetName(), err)
			}
		}
	})
	ready := s.waitReady(t, s.shop, "inventory", digest, "")
	if ready.Status.Contract == nil || ready.Status.Contract.GRPCInterface != "grpc" {
		t.Fatalf("inventory's status.contract %+v: want grpcInterface grpc", ready.Status.Contract)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](1)
	if err := c.Patch(t.Context(), d, patch); err != nil {
		t.Fatal(err)
	}
	pod := s.appPodWithBundle(t, "inventory", digest)
	side := injectedSidecar(t, pod)
	want := fmt.Sprintf("--grpc-target=127.0.0.1:%d", app.Ports[0].ContainerPort)
	if !slices.Contains(side.Args, want) || pod.Annotations[annotationGRPCPortSource] != "container:inventory" {
		t.Fatalf("inventory's sidecar args %q, %s=%q; want %s from container:inventory", side.Args, annotationGRPCPortSource, pod.Annotations[annotationGRPCPortSource], want)
	}

	before := s.b.grpcServed()
	url := s.b.sidecar(t, pod)
	cs := connect(t, url, "")
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "Inventory_GetItem") || !slices.Contains(names, "Inventory_ListItems") || slices.Contains(names, "Inventory_DeleteItem") {
		t.Fatalf("the inventory sidecar's tools %v: want Inventory_GetItem and Inventory_ListItems, and no write (no --allow-writes)", names)
	}
	got, raw := call(t, cs, "Inventory_GetItem", map[string]any{"sku": "LMP-3"})
	resp, _ := got["response"].(map[string]any)
	if got["code"] != "OK" || resp["sku"] != "LMP-3" || resp["quantity"] != "9007199254740993" {
		t.Errorf("Inventory_GetItem through the sidecar: %s; want OK and the demo service's item, its int64 a string", raw)
	}
	if before >= 0 && s.b.grpcServed() <= before {
		t.Errorf("the demo gRPC service served no GetItem during the call (%d before, %d after)", before, s.b.grpcServed())
	}
	// A streaming call is bounded and reaches the service too.
	got, raw = call(t, cs, "Inventory_ListItems", map[string]any{"shelf": "A1", "count": 3})
	if msgs, _ := got["messages"].([]any); len(msgs) != 3 || got["truncated"] == true {
		t.Errorf("Inventory_ListItems count 3 through the sidecar: %s; want 3 messages, not truncated", raw)
	}
	// The client inside most editors lists and calls them with its own
	// schema validation on.
	if !tsClient(t, "sidecar "+pod.Name+" (gRPC)", url, nil, []tsCall{{Tool: "Inventory_GetItem", Args: map[string]any{"sku": "LMP-3"}, Expect: "ok"}}) {
		t.Logf("%s is not set: the TypeScript SDK client was not run (make test-e2e runs it)", clientsDirEnv)
	}
}

// appPodWithBundle waits for a Pod of Deployment app in shop whose
// injected bundle is digest.
func (s *story) appPodWithBundle(t *testing.T, app, digest string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "a "+app+" Pod injected with "+digest, 90*time.Second, func() error {
		pods := &corev1.PodList{}
		if err := s.b.admin().List(t.Context(), pods, client.InNamespace(s.shop), client.MatchingLabels{"app": app}); err != nil {
			return err
		}
		var seen []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp == nil && strings.HasSuffix(p.Annotations[annotationInjectedBundle], "@"+digest) {
				pod = p
				return nil
			}
			seen = append(seen, p.Name+"="+p.Annotations[annotationInjectedBundle])
		}
		return fmt.Errorf("pods: %v", seen)
	})
	return pod
}
