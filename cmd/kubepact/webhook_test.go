//go:build !sidecaronly

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/internal/sidecar"
	"github.com/kubepact/kubepact/test/bigspec"
	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestInjectedSidecarCommandLine runs the command line the injection
// webhook writes (injection.BuildSidecar, the function the webhook calls)
// as a process, beside the demo service, against a registry holding the
// bundle: the arguments are ones the binary accepts, the digest-pinned
// bundle loads, and the tools reach the service.
func TestInjectedSidecarCommandLine(t *testing.T) {
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(demo.URL, "http://"), ":")

	reg := testregistry.New(t, nil)
	tag := reg.Host + "/bundles/catalog:1.4.0"
	out, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "oci://"+tag, "--plain-http")
	if code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	digest := strings.TrimSpace(out)

	// The ServiceContract as the reconciler leaves it once Ready, and the
	// Pod as the ReplicaSet controller sends it for admission.
	sc := &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "catalog"},
		Spec:       v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{OCI: "oci://" + tag}},
		Status:     v1alpha1.ServiceContractStatus{ResolvedRef: tag + "@" + digest, Digest: digest},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			injection.AnnotationContract: "catalog", injection.AnnotationUpstreamPort: port,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "catalog", Image: "example.invalid/catalog:1"}}},
	}
	mcpPort, healthPort := freeport.Port(t), freeport.Port(t)
	inj, err := injection.BuildSidecar(sc, pod, injection.SidecarOptions{
		PlainHTTP: true, MCPPort: int32(mcpPort), HealthPort: int32(healthPort),
	})
	if err != nil {
		t.Fatal(err)
	}
	args := inj.Container.Args
	if want := "--bundle=oci://" + reg.Host + "/bundles/catalog@" + digest; !slices.Contains(args, want) {
		t.Fatalf("args %q lack %s", args, want)
	}
	t.Logf("kubepact %s", strings.Join(args, " "))

	p := launchSidecar(t, args, mcpPort, healthPort)
	cs := p.connect(t)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: map[string]any{"limit": 2}})
	if err != nil || res.IsError {
		t.Fatalf("listProducts through the injected command line: %v %+v\n%s", err, res, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), digest) {
		t.Errorf("the sidecar's log does not name the pinned digest %s:\n%s", digest, p.stderr)
	}

	// /readyz?verbose says which bundle and which tool surface the Pod
	// serves: the same bundle from a directory offers the same surface;
	// with writes allowed it is another.
	got := readyDetailsOf(t, p.health)
	if got.BundleDigest != digest || !strings.HasPrefix(got.ToolSurfaceDigest, "sha256:") || got.Tools != 6 {
		t.Errorf("/readyz?verbose = %+v, want bundle %s, a tool surface digest and 6 tools", got, digest)
	}
	// The tool surface the operator records for the webhook to write on
	// the Pod (sidecar.ToolSurface over the Config these arguments say) is the one
	// the sidecar reports.
	oc, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := bundle.Load(t.Context(), "oci://"+reg.Host+"/bundles/catalog@"+digest, &bundle.LoadOptions{Client: oc})
	if err != nil {
		t.Fatal(err)
	}
	if want, err := sidecar.ToolSurface(t.Context(), sidecarConfigOf(t, args), pulled); err != nil || got.ToolSurfaceDigest != want {
		t.Errorf("the sidecar reports tool surface %s; the operator computes %s (%v) from the same bundle and arguments", got.ToolSurfaceDigest, want, err)
	}
	local := readyDetailsOf(t, startSidecar(t, demo.URL).health)
	if local.BundleDigest != digest || local.ToolSurfaceDigest != got.ToolSurfaceDigest {
		t.Errorf("the same bundle from a directory: %+v, want the digests of %+v", local, got)
	}
	writes := readyDetailsOf(t, startSidecar(t, demo.URL, "--allow-writes").health)
	if writes.ToolSurfaceDigest == got.ToolSurfaceDigest {
		t.Errorf("with --allow-writes the tool surface digest did not change: %+v", writes)
	}
}

// TestInjectedConfigMapSidecar runs what the webhook writes for a
// ServiceContract whose bundle is a ConfigMap: the ConfigMap's key laid out
// as the injected volume mounts it (items: bundle.tar.gz at the mount
// path), and the sidecar's exact arguments but for that path and its
// ports. The sidecar accepts the layout and serves the bundle the
// reconciler pinned, with the surface the operator computes; when the
// ConfigMap's content changes under the Pod, a restarted sidecar refuses
// to start, naming both digests.
func TestInjectedConfigMapSidecar(t *testing.T) {
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(demo.URL, "http://"), ":")

	// The ConfigMap's binaryData, as `kubepact pack` writes it.
	layerFile := filepath.Join(t.TempDir(), v1alpha1.ConfigMapBundleKey)
	if _, stderr, code := runKubepact(t, "pack", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "-o", layerFile); code != 0 {
		t.Fatalf("pack: exit %d: %s", code, stderr)
	}
	layer, err := os.ReadFile(layerFile)
	if err != nil {
		t.Fatal(err)
	}
	// What the reconciler records: the layer's identity.
	b, err := bundle.LoadLayer(layer, nil)
	if err != nil {
		t.Fatal(err)
	}
	digest := string(b.Identity)
	sc := &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "catalog"},
		Spec:       v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{ConfigMapRef: &v1alpha1.LocalObjectReference{Name: "catalog-bundle"}}},
		Status:     v1alpha1.ServiceContractStatus{ResolvedRef: "configmap/catalog-bundle", Digest: digest},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{injection.AnnotationContract: "catalog", injection.AnnotationUpstreamPort: port}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "catalog", Image: "example.invalid/catalog:1"}}},
	}
	mcpPort, healthPort := freeport.Port(t), freeport.Port(t)
	inj, err := injection.BuildSidecar(sc, pod, injection.SidecarOptions{MCPPort: int32(mcpPort), HealthPort: int32(healthPort)})
	if err != nil {
		t.Fatal(err)
	}
	if len(inj.Volumes) != 1 || inj.Volumes[0].ConfigMap == nil || inj.Volumes[0].ConfigMap.Name != "catalog-bundle" ||
		len(inj.Container.VolumeMounts) != 1 || !inj.Container.VolumeMounts[0].ReadOnly {
		t.Fatalf("volumes %+v, mounts %+v: want the ConfigMap mounted read-only", inj.Volumes, inj.Container.VolumeMounts)
	}
	// Lay the volume out as the kubelet does: each item's path under the
	// mount path.
	mount := t.TempDir()
	for _, item := range inj.Volumes[0].ConfigMap.Items {
		if err := os.WriteFile(filepath.Join(mount, item.Path), layer, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	mountPath := inj.Container.VolumeMounts[0].MountPath
	var args []string
	for _, a := range inj.Container.Args {
		if rest, ok := strings.CutPrefix(a, "--bundle="+mountPath+"/"); ok {
			a = "--bundle=" + filepath.Join(mount, rest)
		}
		args = append(args, a)
	}
	if !slices.Contains(args, "--bundle-digest="+digest) {
		t.Fatalf("args %q do not pin the digest %s", args, digest)
	}
	t.Logf("kubepact %s", strings.Join(args, " "))
	p := launchSidecar(t, args, mcpPort, healthPort)
	res, err := p.connect(t).CallTool(t.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: map[string]any{"limit": 2}})
	if err != nil || res.IsError {
		t.Fatalf("listProducts from the mounted ConfigMap bundle: %v %+v\n%s", err, res, p.stderr)
	}
	got := readyDetailsOf(t, p.health)
	want, err := sidecar.ToolSurface(t.Context(), sidecarConfigOf(t, inj.Container.Args), b)
	if err != nil {
		t.Fatal(err)
	}
	if got.BundleDigest != digest || got.ToolSurfaceDigest != want {
		t.Errorf("/readyz?verbose = %+v, want bundle %s and tool surface %s", got, digest, want)
	}

	// The ConfigMap is edited (another bundle under the same key): the
	// kubelet updates the mounted file, and a restarted sidecar refuses it.
	other := filepath.Join(t.TempDir(), "other.tar.gz")
	if _, stderr, code := runKubepact(t, "pack", filepath.Join(repoRoot(t), "examples", "bundles", "payments"), "-o", other); code != 0 {
		t.Fatalf("pack: exit %d: %s", code, stderr)
	}
	otherLayer, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mount, v1alpha1.ConfigMapBundleKey), otherLayer, 0o444); err != nil {
		t.Fatal(err)
	}
	args = replaceFlag(args, "--port=", "--port="+strconv.Itoa(freeport.Port(t)))
	args = replaceFlag(args, "--health-addr=", "--health-addr=127.0.0.1:"+strconv.Itoa(freeport.Port(t)))
	_, stderr, code := runKubepact(t, args...)
	if code != 2 || !strings.Contains(stderr, "but --bundle-digest pins "+digest) {
		t.Errorf("the sidecar on a changed ConfigMap: exit %d, stderr %q; want 2 and a refusal naming the pinned digest", code, stderr)
	}
	// A file that is no packed bundle is refused with what is accepted.
	junk := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(junk, []byte("not a bundle"), 0o444); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runKubepact(t, replaceFlag(args, "--bundle=", "--bundle="+junk)...)
	if code != 2 || !strings.Contains(stderr, "not a packed bundle") {
		t.Errorf("the sidecar on a file that is no bundle: exit %d, stderr %q; want 2 and what it accepts", code, stderr)
	}
}

func replaceFlag(args []string, prefix, with string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if strings.HasPrefix(a, prefix) {
			out[i] = with
		}
	}
	return out
}

// modeSurface is the contract's recorded tool surface for the mode.
func modeSurface(sc *v1alpha1.ServiceContract, mode string) string {
	for _, s := range sc.Status.ToolSurfaces {
		if s.Mode == mode {
			return s.Digest
		}
	}
	return ""
}

// checkModeSurface checks that an admitted Pod carries the contract's tool
// surface for the mode, and that a sidecar run with the Pod's own
// arguments (its ports moved to free ones) reports that surface.
func checkModeSurface(t *testing.T, pod *corev1.Pod, sc *v1alpha1.ServiceContract, mode, digest string) {
	t.Helper()
	want := modeSurface(sc, mode)
	got := pod.Annotations[injection.AnnotationToolSurface]
	if want == "" || got != want {
		t.Errorf("Pod %s in mode %s: annotation %s=%q, want the contract's surface for the mode %q", pod.Name, mode, injection.AnnotationToolSurface, got, want)
		return
	}
	if args := pod.Spec.InitContainers[0].Args; mode != "all" && !slices.Contains(args, "--tool-mode="+mode) {
		t.Errorf("Pod %s: sidecar args %q lack --tool-mode=%s", pod.Name, args, mode)
	}
	mcpPort, healthPort := freeport.Port(t), freeport.Port(t)
	args := replaceFlag(pod.Spec.InitContainers[0].Args, "--port=", "--port="+strconv.Itoa(mcpPort))
	args = replaceFlag(args, "--health-addr=", "--health-addr=127.0.0.1:"+strconv.Itoa(healthPort))
	side := launchSidecar(t, args, mcpPort, healthPort)
	if d := readyDetailsOf(t, side.health); d.BundleDigest != digest || d.ToolSurfaceDigest != got {
		t.Errorf("Pod %s in mode %s: the sidecar reports %+v; the Pod's annotations say digest %s, tool surface %s", pod.Name, mode, d, digest, got)
	}
}

func readyDetailsOf(t *testing.T, health string) sidecar.ReadyDetails {
	t.Helper()
	resp, err := http.Get(health + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d sidecar.ReadyDetails
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("/readyz?verbose: %v", err)
	}
	return d
}

// TestOperatorWebhookProcess runs the built `kubepact operator` with the
// webhook flags against envtest: it makes its own certificate, puts its CA
// in the webhook configuration (the generated one, pointed at the process),
// turns ready only then, and the API server's admission of a Pod naming a
// Ready contract comes back with the sidecar on the contract's digest and
// the image given by --sidecar-image. A Pod in an enabled namespace outside
// its --namespace is admitted without one, with a warning saying why.
func TestOperatorWebhookProcess(t *testing.T) {
	admin, cfg, kubeconfigFile := operatorCluster(t, "kubepact-operator-test")

	// The generated webhook configuration, pointed at the process.
	webhookPort := freeport.Port(t)
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.Unmarshal(raw, mwc); err != nil {
		t.Fatal(err)
	}
	for i := range mwc.Webhooks {
		url := fmt.Sprintf("https://127.0.0.1:%d%s", webhookPort, *mwc.Webhooks[i].ClientConfig.Service.Path)
		mwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url}
	}
	if err := admin.Create(t.Context(), mwc); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubepact-system"}}); err != nil {
		t.Fatal(err)
	}

	reg := testregistry.New(t, nil)
	tag := reg.Host + "/bundles/catalog:1.4.0"
	out, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "oci://"+tag, "--plain-http")
	if code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	digest := strings.TrimSpace(out)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "shop-", Labels: map[string]string{injection.LabelInjection: "enabled"}}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "catalog"}
	appSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "catalog", Image: "example.invalid/catalog:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}}}
	if err := admin.Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: appSpec}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(t.Context(), &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "catalog"},
		Spec: v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{OCI: "oci://" + tag},
			TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "catalog"}},
	}); err != nil {
		t.Fatal(err)
	}

	// An API wider than --tool-mode auto lists one by one: auto settles
	// to discover for it.
	wide := t.TempDir()
	for name, data := range bigspec.WriteBundle(bigspec.Shape{Resources: 30, Schemas: 40, DescriptionWords: 8}) {
		if err := os.WriteFile(filepath.Join(wide, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wideTag := reg.Host + "/bundles/wide:1"
	out, stderr, code = runKubepact(t, "push", wide, "oci://"+wideTag, "--plain-http")
	if code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	wideDigest := strings.TrimSpace(out)
	wideLabels := map[string]string{"app": "wide"}
	if err := admin.Create(t.Context(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "wide"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: wideLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: wideLabels}, Spec: appSpec}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Create(t.Context(), &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "wide"},
		Spec: v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{OCI: "oci://" + wideTag},
			TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "wide"}},
	}); err != nil {
		t.Fatal(err)
	}

	const image = "registry.example.com/kubepact@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	probeAddr := freeAddr(t)
	var logs syncBuffer
	op := exec.Command(kubepactBin, "operator",
		"--kubeconfig", kubeconfigFile,
		"--metrics-bind-address", "0",
		"--health-probe-bind-address", probeAddr,
		"--plain-http", "--allowed-registries", reg.Host, "--cache-dir", t.TempDir(),
		"--webhook-port", strconv.Itoa(webhookPort), "--webhook-host", "127.0.0.1",
		"--webhook-ip-address", "127.0.0.1", "--sidecar-image", image,
		"--sidecar-tool-mode", "discover",
		"--namespace", ns.Name,
		"--log-format", "json")
	op.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=")
	op.Stdout, op.Stderr = &logs, &logs
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- op.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = op.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			t.Logf("operator exited: %v", err)
		case <-time.After(30 * time.Second):
			_ = op.Process.Kill()
			t.Logf("operator killed: %v", <-exited)
		}
	}
	t.Cleanup(stop)
	waitHTTP(t, "http://"+probeAddr+"/readyz", exited, &logs)
	if v := httpGet(t, "http://"+probeAddr+"/readyz?verbose"); !strings.Contains(v, "[+]webhook-certificate ok") || !strings.Contains(v, "[+]webhook ok") {
		t.Errorf("/readyz?verbose does not show the webhook checks:\n%s", v)
	}
	if err := admin.Get(t.Context(), client.ObjectKeyFromObject(mwc), mwc); err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{}
	if err := admin.Get(t.Context(), client.ObjectKey{Namespace: "kubepact-system", Name: "kubepact-webhook-cert"}, secret); err != nil {
		t.Fatalf("the certificate Secret: %v", err)
	}
	if !bytes.Equal(mwc.Webhooks[0].ClientConfig.CABundle, secret.Data["ca-bundle.crt"]) || len(secret.Data["ca-bundle.crt"]) == 0 {
		t.Errorf("the caBundle is not the Secret's CA")
	}

	// The contract turns Ready; a Pod naming it is admitted with the sidecar.
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)
	_, demoPort, _ := strings.Cut(strings.TrimPrefix(demo.URL, "http://"), ":")
	deadline := time.Now().Add(60 * time.Second)
	var injected *corev1.Pod
	for {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "p", Annotations: map[string]string{
			injection.AnnotationContract: "catalog", injection.AnnotationUpstreamPort: demoPort,
			// The operator's default is discover (--sidecar-tool-mode);
			// the Pod's annotation wins.
			injection.AnnotationToolMode: "all",
		}}, Spec: appSpec}
		if err := admin.Create(t.Context(), pod, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if len(pod.Spec.InitContainers) == 1 {
			c := pod.Spec.InitContainers[0]
			if c.Image != image || !slices.Contains(c.Args, "--bundle=oci://"+reg.Host+"/bundles/catalog@"+digest) || !slices.Contains(c.Args, "--plain-http") {
				t.Errorf("injected %s %q; want image %s and the bundle at %s", c.Image, c.Args, image, digest)
			}
			injected = pod
			break
		}
		if time.Now().After(deadline) || processExited(exited) {
			t.Fatalf("no Pod was injected within 60s\n%s", logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The Pod carries the digest and the tool surface the operator
	// computed; the sidecar run with the Pod's own arguments (its ports
	// moved to free ones) reports exactly that surface.
	sc := &v1alpha1.ServiceContract{}
	if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns.Name, Name: "catalog"}, sc); err != nil {
		t.Fatal(err)
	}
	ann := injected.Annotations
	if ann[injection.AnnotationBundleDigest] != digest || ann[injection.AnnotationToolSurface] == "" || ann[injection.AnnotationToolSurface] != sc.Status.ToolSurfaceDigest {
		t.Fatalf("the Pod's annotations %v: want digest %s and the contract's tool surface %q", ann, digest, sc.Status.ToolSurfaceDigest)
	}
	mcpPort, healthPort := freeport.Port(t), freeport.Port(t)
	args := replaceFlag(injected.Spec.InitContainers[0].Args, "--port=", "--port="+strconv.Itoa(mcpPort))
	args = replaceFlag(args, "--health-addr=", "--health-addr=127.0.0.1:"+strconv.Itoa(healthPort))
	side := launchSidecar(t, args, mcpPort, healthPort)
	if d := readyDetailsOf(t, side.health); d.BundleDigest != digest || d.ToolSurfaceDigest != ann[injection.AnnotationToolSurface] {
		t.Errorf("the sidecar reports %+v; the Pod's annotations say digest %s, tool surface %s", d, digest, ann[injection.AnnotationToolSurface])
	}
	res, err := side.connect(t).CallTool(t.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: map[string]any{"limit": 1}})
	if err != nil || res.IsError {
		t.Errorf("listProducts through the injected sidecar: %v %+v\n%s", err, res, side.stderr)
	}

	required := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "r", Annotations: map[string]string{
			injection.AnnotationContract: "catalog", injection.AnnotationInjectPolicy: injection.InjectPolicyRequired,
		}}, Spec: appSpec}
	}
	if p := required(); admin.Create(t.Context(), p, client.DryRunAll) != nil || len(p.Spec.InitContainers) != 1 {
		t.Errorf("a Pod requiring its sidecar was not injected while the operator runs: %+v", p.Spec.InitContainers)
	} else if args := p.Spec.InitContainers[0].Args; !slices.Contains(args, "--tool-mode=discover") {
		t.Errorf("a Pod that names no tool mode: sidecar args %q; want --sidecar-tool-mode's discover", args)
	} else {
		checkModeSurface(t, p, sc, "discover", digest)
	}
	// auto settles to all for the catalog's three operations, and to
	// discover for the wide API: each Pod is told the surface its sidecar
	// serves.
	auto := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "a", Annotations: map[string]string{
		injection.AnnotationContract: "catalog", injection.AnnotationUpstreamPort: demoPort, injection.AnnotationToolMode: "auto",
	}}, Spec: appSpec}
	if err := admin.Create(t.Context(), auto, client.DryRunAll); err != nil || len(auto.Spec.InitContainers) != 1 {
		t.Fatalf("a Pod in mode auto: %v %+v", err, auto.Spec.InitContainers)
	}
	if checkModeSurface(t, auto, sc, "auto", digest); auto.Annotations[injection.AnnotationToolSurface] != ann[injection.AnnotationToolSurface] {
		t.Errorf("mode auto's surface %s on the catalog is not mode all's %s", auto.Annotations[injection.AnnotationToolSurface], ann[injection.AnnotationToolSurface])
	}
	wsc := &v1alpha1.ServiceContract{}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if err := admin.Get(t.Context(), client.ObjectKey{Namespace: ns.Name, Name: "wide"}, wsc); err != nil {
			t.Fatal(err)
		}
		if wsc.Status.Digest == wideDigest && len(wsc.Status.ToolSurfaces) == len(injection.ToolModes) {
			break
		}
		if time.Now().After(deadline) || processExited(exited) {
			t.Fatalf("the wide contract has no tool surface per mode within 60s: %+v\n%s", wsc.Status, logs.String())
		}
	}
	wideAuto := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "w", Annotations: map[string]string{
		injection.AnnotationContract: "wide", injection.AnnotationUpstreamPort: demoPort, injection.AnnotationToolMode: "auto",
	}}, Spec: appSpec}
	if err := admin.Create(t.Context(), wideAuto, client.DryRunAll); err != nil || len(wideAuto.Spec.InitContainers) != 1 {
		t.Fatalf("a Pod of the wide contract in mode auto: %v %+v", err, wideAuto.Spec.InitContainers)
	}
	checkModeSurface(t, wideAuto, wsc, "auto", wideDigest)
	if got, want := wideAuto.Annotations[injection.AnnotationToolSurface], modeSurface(wsc, "discover"); got != want || got == wsc.Status.ToolSurfaceDigest {
		t.Errorf("mode auto's surface %s on the wide API: want mode discover's %s, not mode all's %s", got, want, wsc.Status.ToolSurfaceDigest)
	}
	// A mode that is not one is refused, as before.
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "b", Annotations: map[string]string{
		injection.AnnotationContract: "catalog", injection.AnnotationInjectPolicy: injection.InjectPolicyRequired, injection.AnnotationToolMode: "everything",
	}}, Spec: appSpec}
	if err := admin.Create(t.Context(), bad, client.DryRunAll); err == nil || !strings.Contains(err.Error(), `kubepact.dev/tool-mode="everything": want all`) {
		t.Errorf("a Pod asking for tool mode everything: %v, want the refusal naming the modes", err)
	}

	// Outside --namespace: admitted as it is, saying why.
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "elsewhere-", Labels: map[string]string{injection.LabelInjection: "enabled"}}}
	if err := admin.Create(t.Context(), other); err != nil {
		t.Fatal(err)
	}
	var warned warningsSeen
	wcfg := rest.CopyConfig(cfg)
	wcfg.WarningHandlerWithContext = &warned
	wc, err := client.New(wcfg, client.Options{Scheme: admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: other.Name, Name: "e", Annotations: map[string]string{injection.AnnotationContract: "catalog"}}, Spec: appSpec}
	if err := wc.Create(t.Context(), elsewhere, client.DryRunAll); err != nil || len(elsewhere.Spec.InitContainers) != 0 {
		t.Errorf("a Pod outside --namespace: %v %+v; want admitted without the sidecar", err, elsewhere.Spec.InitContainers)
	}
	if !strings.Contains(strings.Join(warned.list, "\n"), "does not watch this namespace") {
		t.Errorf("warnings %q do not say the namespace is not watched", warned.list)
	}

	// With the operator gone, an ordinary Pod is admitted without its
	// sidecar (failurePolicy Ignore), but one that requires it is refused
	// (failurePolicy Fail on its own webhook entry).
	stop()
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "o", Annotations: map[string]string{injection.AnnotationContract: "catalog"}}, Spec: appSpec}
	if err := admin.Create(t.Context(), plain, client.DryRunAll); err != nil || len(plain.Spec.InitContainers) != 0 {
		t.Errorf("webhook down, ordinary Pod: %v %+v; want admitted without the sidecar", err, plain.Spec.InitContainers)
	}
	if err := admin.Create(t.Context(), required(), client.DryRunAll); err == nil || !strings.Contains(err.Error(), "inject-required.kubepact.dev") {
		t.Errorf("webhook down, a Pod requiring its sidecar: %v; want refused by inject-required.kubepact.dev", err)
	}
}

// warningsSeen records the API server's Warning headers.
type warningsSeen struct {
	mu   sync.Mutex
	list []string
}

func (w *warningsSeen) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// TestOperatorWebhookOffByDefault: `kubepact operator --help` documents
// the webhook's flags and that it is off unless --webhook-port is given.
func TestOperatorWebhookOffByDefault(t *testing.T) {
	out, stderr, code := runKubepact(t, "operator", "--help")
	if code != 0 {
		t.Fatalf("operator --help: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"--webhook-port int", "off (0) by default", "--sidecar-image", "--webhook-self-managed-certs", "--sidecar-max-memory", "--sidecar-tool-mode"} {
		if !strings.Contains(out, want) {
			t.Errorf("operator --help lacks %q:\n%s", want, out)
		}
	}
	o := &operatorOptions{}
	fs := pflag.NewFlagSet("operator", pflag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.webhook.enabled() {
		t.Errorf("the webhook is on with no flags (port %d)", o.webhook.port)
	}
}

func TestOperatorWebhookRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--webhook-port", "9443"}, "--sidecar-image is required"},
		{[]string{"--webhook-port", "70000", "--sidecar-image", "x"}, "use 1 to 65535"},
		{[]string{"--webhook-port", "9443", "--sidecar-image", "x", "--webhook-ip-address", "nope"}, "not an IP address"},
		{[]string{"--webhook-port", "9443", "--sidecar-image", "x", "--sidecar-memory-limit", "-1Mi"}, "--sidecar-memory-limit"},
		{[]string{"--webhook-port", "9443", "--sidecar-image", "x", "--sidecar-tool-mode", "some"}, `--sidecar-tool-mode "some" is not accepted; use all, discover, auto`},
	} {
		_, stderr, code := runKubepact(t, append([]string{"operator", "--metrics-bind-address", "0", "--health-probe-bind-address", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("operator %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
