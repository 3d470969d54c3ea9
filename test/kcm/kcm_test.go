package kcm_test

import (
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubepact/kubepact/test/kcm"
)

// TestDeploymentBecomesPods starts envtest's API server and etcd and the
// real kube-controller-manager beside them: a Deployment in a new namespace
// becomes a ReplicaSet and its Pods.
func TestDeploymentBecomesPods(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Skip("KUBEBUILDER_ASSETS is not set: run `make test`, or `make envtest-assets` and KUBEBUILDER_ASSETS=bin/k8s/<version>")
	}
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	p, err := kcm.Start(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Error(err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "kcm-"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.invalid/web:1"}}},
			},
		},
	}
	if err := c.Create(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var pods corev1.PodList
		if err := c.List(t.Context(), &pods, client.InNamespace(ns.Name)); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 2 {
			owner := metav1.GetControllerOf(&pods.Items[0])
			if owner == nil || owner.Kind != "ReplicaSet" {
				t.Fatalf("pod %s: controller %v, want a ReplicaSet", pods.Items[0].Name, owner)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d pods after 60s, want 2; kube-controller-manager said:\n%s", len(pods.Items), p.Logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
