package injection_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/test/envtestsuite"
	"github.com/kubepact/kubepact/test/testregistry"
)

// catalogVariant copies the catalog bundle with its OpenAPI server URL
// replaced: another digest, and (without a port) no contract HTTP port.
func catalogVariant(t *testing.T, serverURL string) string {
	t.Helper()
	src := filepath.Join("..", "..", "examples", "bundles", "catalog")
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dst, "interfaces", "openapi.yaml")
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(raw), "url: http://127.0.0.1:8080", "url: "+serverURL, 1)
	if changed == string(raw) {
		t.Fatal("the catalog's OpenAPI server URL is not http://127.0.0.1:8080 any more")
	}
	if err := os.WriteFile(spec, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// waitPods polls the ServiceContract until status.pods satisfies cond.
func waitPods(t *testing.T, key client.ObjectKey, what string, cond func(*v1alpha1.PodsStatus) bool) *v1alpha1.ServiceContract {
	t.Helper()
	return suite.WaitFor(t, key, what, func(sc *v1alpha1.ServiceContract) bool {
		if !cond(sc.Status.Pods) {
			if sc.Status.Pods != nil {
				t.Logf("status.pods: %+v", *sc.Status.Pods)
			}
			return false
		}
		return true
	})
}

// TestInjectedPodsReport: Pods the ReplicaSet controller makes from a
// Deployment are injected with the contract's digest and tool surface
// written on them (the operator never writes a Pod), and the
// ServiceContract's status lists them under that digest. When the tag
// moves, the running Pods show as stale under the old digest, and a new
// Pod is listed under the new, current one. Each upstream port source is
// said on the Pod.
func TestInjectedPodsReport(t *testing.T) {
	suite.NeedKCM(t)
	needWebhook(t)
	ns := injectionNamespace(t, true)
	reg := testregistry.New(t, nil)
	oc := envtestsuite.PlainClient(t, nil)
	ref := reg.Host + "/bundles/catalog:stable"
	d1 := string(envtestsuite.Push(t, oc, filepath.Join("..", "..", "examples", "bundles", "catalog"), ref))
	suite.Create(t, deployment(ns, "catalog", 0, map[string]string{injection.AnnotationContract: "catalog"}))
	key := client.ObjectKey{Namespace: ns, Name: "catalog"}
	suite.Create(t, envtestsuite.NewContract(ns, "catalog", "oci://"+ref, "catalog"))
	sc := suite.WaitFor(t, key, "Ready with a tool surface", func(sc *v1alpha1.ServiceContract) bool {
		return envtestsuite.IsReady(sc) && sc.Status.Digest == d1 && sc.Status.ToolSurfaceDigest != ""
	})
	surface1 := sc.Status.ToolSurfaceDigest
	if c := sc.Status.Contract; c == nil || c.HTTPPort != 8080 || c.HTTPInterface != "http" {
		t.Errorf("status.contract %+v, want httpPort 8080 from interface http", c)
	}
	scale(t, ns, "catalog", 2)
	pods := podsOf(t, ns, "catalog", 2)
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
		want := map[string]string{
			injection.AnnotationBundleDigest:       d1,
			injection.AnnotationToolSurface:        surface1,
			injection.AnnotationUpstreamPortSource: injection.PortFromContract + "http",
		}
		for k, v := range want {
			if p.Annotations[k] != v {
				t.Errorf("pod %s: annotation %s=%q, want %q", p.Name, k, p.Annotations[k], v)
			}
		}
		if p.Labels[injection.LabelInjected] != "true" {
			t.Errorf("pod %s: labels %v lack %s=true", p.Name, p.Labels, injection.LabelInjected)
		}
		if c := sidecarOf(&p); c == nil || !slices.Contains(c.Args, "--upstream=http://127.0.0.1:8080") {
			t.Errorf("pod %s: sidecar %+v does not call the contract's port 8080", p.Name, c)
		}
	}
	slices.Sort(names)
	got := waitPods(t, key, "both Pods under the digest", func(p *v1alpha1.PodsStatus) bool { return p != nil && p.Total == 2 })
	want := &v1alpha1.PodsStatus{Total: 2, Digests: []v1alpha1.DigestPods{{Digest: d1, Current: true, ToolSurfaceDigest: surface1, Count: 2, Pods: names}}}
	if diff := cmp.Diff(got.Status.Pods, want); diff != "" {
		t.Errorf("status.pods (-got +want):\n%s", diff)
	}

	// The tag moves to a bundle whose server URL names no port.
	d2 := string(envtestsuite.Push(t, oc, catalogVariant(t, "http://catalog.internal"), ref))
	suite.Update(t, key, func(sc *v1alpha1.ServiceContract) { sc.Spec.Interval = &metav1.Duration{Duration: 31 * time.Second} })
	sc = suite.WaitFor(t, key, "the moved tag", func(sc *v1alpha1.ServiceContract) bool { return envtestsuite.IsReady(sc) && sc.Status.Digest == d2 })
	if sc.Status.Contract == nil || sc.Status.Contract.HTTPPort != 0 {
		t.Errorf("status.contract %+v, want no httpPort", sc.Status.Contract)
	}
	got = waitPods(t, key, "the running Pods stale", func(p *v1alpha1.PodsStatus) bool { return p != nil && p.Stale == 2 })
	if d := got.Status.Pods.Digests; len(d) != 1 || d[0].Digest != d1 || d[0].Current || d[0].Count != 2 {
		t.Errorf("status.pods.digests %+v, want the 2 Pods under the old digest, not current", d)
	}

	// A new Pod is pinned to the new digest; its upstream port comes from
	// its app container now that the contract names none.
	scale(t, ns, "catalog", 3)
	var fresh *corev1.Pod
	for _, p := range podsOf(t, ns, "catalog", 3) {
		if !slices.Contains(names, p.Name) {
			fresh = &p
		}
	}
	if fresh == nil {
		t.Fatal("no third Pod")
	}
	if a := fresh.Annotations; a[injection.AnnotationBundleDigest] != d2 || a[injection.AnnotationToolSurface] != sc.Status.ToolSurfaceDigest ||
		a[injection.AnnotationUpstreamPortSource] != injection.PortFromContainer+"catalog" {
		t.Errorf("the new Pod's annotations %v: want digest %s, surface %s, port from container:catalog", a, d2, sc.Status.ToolSurfaceDigest)
	}
	got = waitPods(t, key, "the new Pod current, the others stale", func(p *v1alpha1.PodsStatus) bool { return p != nil && p.Total == 3 })
	want = &v1alpha1.PodsStatus{Total: 3, Stale: 2, Digests: []v1alpha1.DigestPods{
		{Digest: d2, Current: true, ToolSurfaceDigest: sc.Status.ToolSurfaceDigest, Count: 1, Pods: []string{fresh.Name}},
		{Digest: d1, ToolSurfaceDigest: surface1, Count: 2, Pods: names},
	}}
	if diff := cmp.Diff(got.Status.Pods, want); diff != "" {
		t.Errorf("status.pods (-got +want):\n%s", diff)
	}

	// The annotation wins over the others, and says so.
	pod := restrictedPod(ns, "annotated", map[string]string{injection.AnnotationContract: "catalog", injection.AnnotationUpstreamPort: "9090"})
	if err := suite.Admin.Create(t.Context(), pod, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if c := sidecarOf(pod); c == nil || !slices.Contains(c.Args, "--upstream=http://127.0.0.1:9090") || pod.Annotations[injection.AnnotationUpstreamPortSource] != injection.PortFromAnnotation {
		t.Errorf("annotated Pod: sidecar %+v, annotations %v; want port 9090 from the annotation", c, pod.Annotations)
	}
}

// TestInjectConfigMapBundle: a contract whose bundle is a ConfigMap gets
// the ConfigMap mounted read-only into the sidecar alone, pinned by the
// digest the reconciler recorded; the Pod passes the API server's
// validation and the restricted Pod Security Standard.
func TestInjectConfigMapBundle(t *testing.T) {
	needWebhook(t)
	ns := injectionNamespace(t, true)
	b, err := bundle.LoadDir(filepath.Join("..", "..", "examples", "bundles", "catalog"), nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	suite.Create(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "catalog-bundle"},
		BinaryData: map[string][]byte{v1alpha1.ConfigMapBundleKey: img.Layer},
	})
	suite.Create(t, deployment(ns, "catalog", 0, nil))
	sc := envtestsuite.NewContract(ns, "catalog", "", "catalog")
	sc.Spec.Bundle = v1alpha1.BundleSource{ConfigMapRef: &v1alpha1.LocalObjectReference{Name: "catalog-bundle"}}
	suite.Create(t, sc)
	got := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "Ready with a tool surface", func(sc *v1alpha1.ServiceContract) bool {
		return envtestsuite.IsReady(sc) && sc.Status.ToolSurfaceDigest != ""
	})
	if got.Status.Digest != string(b.Identity) {
		t.Fatalf("digest %s, want the bundle's identity %s", got.Status.Digest, b.Identity)
	}
	pod := restrictedPod(ns, "from-configmap", map[string]string{injection.AnnotationContract: "catalog"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The webhook reads the contract from the operator's cache: wait
		// until it has seen it Ready.
		p := pod.DeepCopy()
		if err := suite.Admin.Create(t.Context(), p, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if sidecarOf(p) != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := suite.Admin.Create(t.Context(), pod); err != nil {
		t.Fatalf("the injected Pod was refused (validation or PodSecurity restricted): %v", err)
	}
	c := sidecarOf(pod)
	if c == nil {
		t.Fatalf("no sidecar injected: %+v", pod.Spec.InitContainers)
	}
	for _, want := range []string{"--bundle=/var/run/kubepact/bundle/" + v1alpha1.ConfigMapBundleKey, "--bundle-digest=" + got.Status.Digest} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %s", c.Args, want)
		}
	}
	if len(c.VolumeMounts) != 1 || !c.VolumeMounts[0].ReadOnly || c.VolumeMounts[0].MountPath != "/var/run/kubepact/bundle" {
		t.Errorf("mounts %+v, want the bundle read-only at /var/run/kubepact/bundle", c.VolumeMounts)
	}
	var vol *corev1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == c.VolumeMounts[0].Name {
			vol = &pod.Spec.Volumes[i]
		}
	}
	if vol == nil || vol.ConfigMap == nil || vol.ConfigMap.Name != "catalog-bundle" {
		t.Errorf("volume %+v, want the ConfigMap catalog-bundle", vol)
	}
	for _, app := range pod.Spec.Containers {
		if len(app.VolumeMounts) != 0 {
			t.Errorf("container %s mounts %+v: the bundle is for the sidecar alone", app.Name, app.VolumeMounts)
		}
	}
	if a := pod.Annotations; a[injection.AnnotationBundleDigest] != got.Status.Digest || a[injection.AnnotationToolSurface] != got.Status.ToolSurfaceDigest ||
		a[injection.AnnotationInjectedBundle] != fmt.Sprintf("configmap/catalog-bundle@%s", got.Status.Digest) {
		t.Errorf("annotations %v, want digest, surface and configmap/catalog-bundle@digest", a)
	}
}
