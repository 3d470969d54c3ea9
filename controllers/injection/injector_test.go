package injection_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/test/envtestsuite"
	"github.com/kubepact/kubepact/test/testregistry"
)

const sidecarImage = "example.invalid/kubepact@sha256:1111111111111111111111111111111111111111111111111111111111111111"

// needWebhook waits until the API server calls the webhook with the
// operator's own certificate: a dry-run Pod naming a contract that does not
// exist comes back with the injector's warning. (With failurePolicy Ignore
// an unreachable webhook is silent, so every test that expects an
// injection checks for it.)
func needWebhook(t *testing.T) {
	t.Helper()
	suite.NeedControlPlane(t)
	ns := injectionNamespace(t, true)
	c, warns := warningClient(t)
	deadline := time.Now().Add(60 * time.Second)
	for {
		pod := restrictedPod(ns, "probe", map[string]string{injection.AnnotationContract: "no-such-contract"})
		warns.reset()
		err := c.Create(t.Context(), pod, client.DryRunAll)
		if err == nil && warns.contains("does not exist") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook was not called within 60s (create: %v; warnings %q; certificate: %v)", err, warns.all(), rotator.Ready(nil))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// injectionNamespace creates a namespace opted in to injection, holding
// Pods to the restricted Pod Security Standard when restricted is set.
func injectionNamespace(t testing.TB, restricted bool) string {
	t.Helper()
	labels := map[string]string{injection.LabelInjection: "enabled"}
	if restricted {
		labels["pod-security.kubernetes.io/enforce"] = "restricted"
		labels["pod-security.kubernetes.io/enforce-version"] = "latest"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "inject-", Labels: labels}}
	if err := suite.Admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// restrictedSpec is an application Pod the restricted standard admits.
func restrictedSpec() corev1.PodSpec {
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{
			Name: "catalog", Image: "example.invalid/catalog:1",
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
			SecurityContext: &corev1.SecurityContext{
				RunAsUser: ptr.To[int64](1000), AllowPrivilegeEscalation: ptr.To(false),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}

func restrictedPod(ns, name string, ann map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: ann}, Spec: restrictedSpec()}
}

// readyContract pushes the catalog bundle to a registry on loopback, creates
// the target Deployment (no replicas yet, its template naming the contract)
// and a ServiceContract on the tag, and waits until it is Ready.
func readyContract(t *testing.T, ns, name string) (*v1alpha1.ServiceContract, string) {
	t.Helper()
	reg := testregistry.New(t, nil)
	d := envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), filepath.Join("..", "..", "examples", "bundles", "catalog"), reg.Host+"/bundles/catalog:1.4.0")
	suite.Create(t, deployment(ns, name, 0, map[string]string{injection.AnnotationContract: name}))
	key := client.ObjectKey{Namespace: ns, Name: name}
	suite.Create(t, envtestsuite.NewContract(ns, name, "oci://"+reg.Host+"/bundles/catalog:1.4.0", name))
	sc := suite.WaitFor(t, key, "Ready", envtestsuite.IsReady)
	if sc.Status.Digest != d.String() {
		t.Fatalf("digest %s, pushed %s", sc.Status.Digest, d)
	}
	return sc, "--bundle=oci://" + reg.Host + "/bundles/catalog@" + d.String()
}

func deployment(ns, name string, replicas int32, ann map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: ann},
				Spec:       restrictedSpec(),
			},
		},
	}
}

func scale(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	if err := suite.Admin.Patch(t.Context(), d, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

// podsOf waits until the Deployment's ReplicaSet has created n Pods.
func podsOf(t *testing.T, ns, app string, n int) []corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var pods corev1.PodList
		if err := suite.Admin.List(t.Context(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) >= n {
			return pods.Items
		}
		if time.Now().After(deadline) {
			var rs appsv1.ReplicaSetList
			_ = suite.Admin.List(t.Context(), &rs, client.InNamespace(ns))
			var conds []string
			for _, r := range rs.Items {
				for _, c := range r.Status.Conditions {
					conds = append(conds, fmt.Sprintf("%s %s=%s %s: %s", r.Name, c.Type, c.Status, c.Reason, c.Message))
				}
			}
			t.Fatalf("%s/%s: %d Pods after 60s, want %d; ReplicaSet conditions: %q", ns, app, len(pods.Items), n, conds)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func sidecarOf(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == "kubepact" {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// TestInjectDeploymentPods: Pods the ReplicaSet controller creates from a
// Deployment in an enabled namespace carry the native sidecar on the
// contract's digest, within the restricted Pod Security Standard; Pods
// without the annotation or outside enabled namespaces are untouched; and
// admitting an injected Pod again changes nothing.
func TestInjectDeploymentPods(t *testing.T) {
	suite.NeedKCM(t)
	needWebhook(t)
	ns := injectionNamespace(t, true)
	// The namespace does enforce the restricted standard.
	loose := restrictedPod(ns, "loose", nil)
	loose.Spec.Containers[0].SecurityContext = nil
	if err := suite.Admin.Create(t.Context(), loose, client.DryRunAll); err == nil || !strings.Contains(err.Error(), "restricted") {
		t.Fatalf("a Pod outside the restricted standard: %v, want a PodSecurity refusal", err)
	}
	sc, bundleArg := readyContract(t, ns, "catalog")
	scale(t, ns, "catalog", 2)
	suite.Create(t, deployment(ns, "plain", 1, nil))
	off := suite.NewNamespace(t) // not labelled
	suite.Create(t, deployment(off, "catalog", 1, map[string]string{injection.AnnotationContract: "catalog"}))

	pods := podsOf(t, ns, "catalog", 2)
	for i := range pods {
		pod := &pods[i]
		c := sidecarOf(pod)
		if c == nil {
			t.Fatalf("pod %s: no kubepact init container: %+v", pod.Name, pod.Spec.InitContainers)
		}
		if !slices.Contains(c.Args, bundleArg) {
			t.Errorf("pod %s: args %q lack %s", pod.Name, c.Args, bundleArg)
		}
		if c.Image != sidecarImage {
			t.Errorf("pod %s: image %s, want %s", pod.Name, c.Image, sidecarImage)
		}
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Errorf("pod %s: restartPolicy %v, want Always", pod.Name, c.RestartPolicy)
		}
		if got, want := pod.Annotations[injection.AnnotationInjectedBundle], strings.TrimPrefix(bundleArg, "--bundle="); got != want {
			t.Errorf("pod %s: annotation %s=%q, want %q", pod.Name, injection.AnnotationInjectedBundle, got, want)
		}
		if len(pod.Spec.Containers) != 1 || pod.Spec.Containers[0].Name != "catalog" {
			t.Errorf("pod %s: containers changed: %+v", pod.Name, pod.Spec.Containers)
		}
	}
	for _, p := range append(podsOf(t, ns, "plain", 1), podsOf(t, off, "catalog", 1)...) {
		if len(p.Spec.InitContainers) != 0 || p.Annotations[injection.AnnotationInjectedBundle] != "" {
			t.Errorf("pod %s/%s was injected: %+v", p.Namespace, p.Name, p.Spec.InitContainers)
		}
	}

	// Admitted again — the handler itself, and the API server (dry run) —
	// the injected Pod is left byte for byte as it is.
	raw, err := json.Marshal(&pods[0])
	if err != nil {
		t.Fatal(err)
	}
	resp := injector.Handle(t.Context(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Namespace: ns, Object: runtime.RawExtension{Raw: raw},
	}})
	if !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("second admission: allowed=%v patches=%+v, want allowed and none", resp.Allowed, resp.Patches)
	}
	again := pods[0].DeepCopy()
	again.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "again", Labels: map[string]string{"copy": "true"}, Annotations: again.Annotations}
	again.Status = corev1.PodStatus{}
	sent, _ := json.Marshal(again.Spec)
	if err := suite.Admin.Create(t.Context(), again, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(again.Spec); !bytes.Equal(got, sent) {
		t.Errorf("re-admitting an injected Pod changed its spec:\n sent %s\n got  %s", sent, got)
	}

	// A contract that is Ready but a Pod with its own container named
	// kubepact: left as it is, with a warning.
	c, warns := warningClient(t)
	own := restrictedPod(ns, "own", map[string]string{injection.AnnotationContract: sc.Name})
	own.Spec.Containers = append(own.Spec.Containers, corev1.Container{Name: "kubepact", Image: "example.invalid/mine:1",
		SecurityContext: own.Spec.Containers[0].SecurityContext})
	if err := c.Create(t.Context(), own); err != nil {
		t.Fatal(err)
	}
	if len(own.Spec.InitContainers) != 0 || own.Spec.Containers[1].Image != "example.invalid/mine:1" {
		t.Errorf("the user's kubepact container was touched: %+v %+v", own.Spec.InitContainers, own.Spec.Containers)
	}
	if !warns.contains(`already has a container named "kubepact"`) {
		t.Errorf("warnings %q do not say why nothing was injected", warns.all())
	}
}

// TestInjectContractNotReady: a contract that is not Ready never blocks a
// Pod by default (admitted without the sidecar, with a warning and an
// Event); with inject-policy required the Pod is refused, the message
// naming the contract and its failing condition.
func TestInjectContractNotReady(t *testing.T) {
	needWebhook(t)
	ns := injectionNamespace(t, true)
	reg := testregistry.New(t, nil)
	suite.Create(t, deployment(ns, "broken", 0, nil))
	suite.Create(t, envtestsuite.NewContract(ns, "broken", "oci://"+reg.Host+"/bundles/missing:1", "broken"))
	suite.WaitFor(t, client.ObjectKey{Namespace: ns, Name: "broken"}, "BundleResolved=False", func(sc *v1alpha1.ServiceContract) bool {
		s, _ := envtestsuite.Condition(sc, v1alpha1.ConditionBundleResolved)
		return s == metav1.ConditionFalse
	})
	c, warns := warningClient(t)

	pod := restrictedPod(ns, "lenient", map[string]string{injection.AnnotationContract: "broken"})
	if err := c.Create(t.Context(), pod); err != nil {
		t.Fatalf("a Pod whose contract is not Ready was refused: %v", err)
	}
	if len(pod.Spec.InitContainers) != 0 {
		t.Errorf("injected from a contract that is not Ready: %+v", pod.Spec.InitContainers)
	}
	if !warns.contains("ServiceContract "+ns+"/broken has no valid resolved bundle") || !warns.contains("BundleResolved=False") {
		t.Errorf("warnings %q do not name the contract and its failing condition", warns.all())
	}
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(suite.EventReasons(t, ns, "broken"), injection.ReasonSidecarNotInjected) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s Event on the ServiceContract; events: %q", injection.ReasonSidecarNotInjected, suite.EventReasons(t, ns, "broken"))
		}
		time.Sleep(100 * time.Millisecond)
	}

	strict := restrictedPod(ns, "strict", map[string]string{injection.AnnotationContract: "broken", injection.AnnotationInjectPolicy: "required"})
	err := c.Create(t.Context(), strict)
	if err == nil || !apierrors.IsForbidden(err) {
		t.Fatalf("required, contract not Ready: %v, want a refusal", err)
	}
	for _, want := range []string{"broken", "BundleResolved=False", "ArtifactNotFound"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}

	missing := restrictedPod(ns, "missing", map[string]string{injection.AnnotationContract: "nope", injection.AnnotationInjectPolicy: "required"})
	if err := c.Create(t.Context(), missing); err == nil || !strings.Contains(err.Error(), "ServiceContract "+ns+"/nope does not exist") {
		t.Errorf("required, contract missing: %v, want a refusal naming it", err)
	}
}

// TestCertRotation forces a rotation of the CA and the serving certificate
// while Pods keep being admitted: every one is injected, and at the end the
// webhook configuration trusts only the new CA.
func TestCertRotation(t *testing.T) {
	needWebhook(t)
	ns := injectionNamespace(t, false)
	sc, bundleArg := readyContract(t, ns, "catalog")
	before := caBundle(t)
	secretBefore := certSecret(t)

	rotator.Rotate()
	admitted := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		pod := restrictedPod(ns, fmt.Sprintf("p%d", admitted), map[string]string{injection.AnnotationContract: sc.Name})
		if err := suite.Admin.Create(t.Context(), pod, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if c := sidecarOf(pod); c == nil || !slices.Contains(c.Args, bundleArg) {
			t.Fatalf("admission %d during the rotation: not injected (%+v); the webhook was not reachable", admitted, pod.Spec.InitContainers)
		}
		admitted++
		s := certSecret(t)
		if now := caBundle(t); !bytes.Equal(s.Data["ca.crt"], secretBefore.Data["ca.crt"]) &&
			!bytes.Contains(now, secretBefore.Data["ca.crt"]) && !bytes.Equal(s.Data["tls.crt"], secretBefore.Data["tls.crt"]) &&
			bytes.Equal(now, s.Data["ca-bundle.crt"]) {
			break // a new CA signs the served certificate and the old one is no longer trusted
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rotation did not complete within 60s (%d admissions); caBundle changed: %v", admitted, !bytes.Equal(caBundle(t), before))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// And after it, still.
	for i := range 5 {
		pod := restrictedPod(ns, fmt.Sprintf("after%d", i), map[string]string{injection.AnnotationContract: sc.Name})
		if err := suite.Admin.Create(t.Context(), pod, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if sidecarOf(pod) == nil {
			t.Fatalf("admission %d after the rotation: not injected", i)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%d admissions during the rotation, all injected", admitted)
}

func caBundle(t *testing.T) []byte {
	t.Helper()
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := suite.Admin.Get(t.Context(), client.ObjectKey{Name: "kubepact-injector"}, mwc); err != nil {
		t.Fatal(err)
	}
	return mwc.Webhooks[0].ClientConfig.CABundle
}

func certSecret(t *testing.T) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := suite.Admin.Get(t.Context(), client.ObjectKey{Namespace: operatorNamespace, Name: "kubepact-webhook-cert"}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// warnings collects the API server's Warning headers.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = nil
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.list)
}

func (w *warnings) contains(s string) bool {
	for _, x := range w.all() {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

// warningClient is an admin client that records the warnings it is sent.
func warningClient(t *testing.T) (client.Client, *warnings) {
	t.Helper()
	w := &warnings{}
	cfg := rest.CopyConfig(suite.AdminConfig)
	cfg.WarningHandlerWithContext = w
	c, err := client.New(cfg, client.Options{Scheme: suite.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, w
}
