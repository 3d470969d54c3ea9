package injection_test

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/test/envtestsuite"
	"github.com/kubepact/kubepact/test/testregistry"
)

// operatorUser is the identity the package's operator runs as.
const operatorUser = "system:serviceaccount:" + operatorNamespace + ":" + operatorSA

// startOperator runs another operator's webhook beside the package's, wired
// as `kubepact operator --namespace=… --webhook-port=…` wires it: a manager
// of its own, running as user, whose cache watches inj.Namespaces (all when
// empty), serving inj through SetupInjector. A copy of config/webhook's
// configuration sends it the Pods of the namespaces given the label it
// returns (and no others: the package's webhook keeps
// kubepact.dev/injection=enabled).
func startOperator(t *testing.T, user string, inj *injection.Injector) map[string]string {
	t.Helper()
	suite.NeedControlPlane(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(webhookHost, "0"))
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cfg := rest.CopyConfig(suite.AdminConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	cacheOpts := cache.Options{}
	if len(inj.Namespaces) > 0 {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range inj.Namespaces {
			cacheOpts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: suite.Scheme, Cache: cacheOpts,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{Host: webhookHost, Port: port, CertDir: webhookCertDir}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := injection.SetupInjector(mgr, inj, nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(t.Context()) }()
	t.Cleanup(func() {
		if err := <-done; err != nil {
			t.Errorf("the other operator's manager: %v", err)
		}
	})

	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := yaml.Unmarshal(raw, mwc); err != nil {
		t.Fatal(err)
	}
	label := map[string]string{"test.kubepact.dev/operator": "op-" + strconv.Itoa(port)}
	mwc.Name = "kubepact-injector-" + label["test.kubepact.dev/operator"]
	for i := range mwc.Webhooks {
		w := &mwc.Webhooks[i]
		url := fmt.Sprintf("https://%s%s", net.JoinHostPort(webhookHost, strconv.Itoa(port)), *w.ClientConfig.Service.Path)
		w.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: webhookCAData}
		w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: label}
	}
	suite.Create(t, mwc)
	t.Cleanup(func() { _ = suite.Admin.Delete(t.Context(), mwc) })
	return label
}

// labelNamespace adds labels to the namespace ns.
func labelNamespace(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		t.Fatal(err)
	}
	if err := suite.Admin.Patch(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, client.RawPatch("application/merge-patch+json", patch)); err != nil {
		t.Fatal(err)
	}
}

// waitAdmission dry-runs a Pod naming contract in ns until the webhook's
// answer satisfies ok (failurePolicy Ignore makes an unreachable webhook
// silent, and a new configuration takes the API server a moment).
func waitAdmission(t *testing.T, ns, contract, what string, ok func(pod *corev1.Pod, warns *warnings) bool) {
	t.Helper()
	c, warns := warningClient(t)
	deadline := time.Now().Add(60 * time.Second)
	for {
		warns.reset()
		pod := restrictedPod(ns, "probe", map[string]string{injection.AnnotationContract: contract})
		err := c.Create(t.Context(), pod, client.DryRunAll)
		if err == nil && ok(pod, warns) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60s (create: %v; init containers %d; warnings %q)", what, err, len(pod.Spec.InitContainers), warns.all())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func injected(pod *corev1.Pod, _ *warnings) bool { return sidecarOf(pod) != nil }

// waitEvent waits for an Event of the injector's regarding an object of
// kind in ns whose note says note, and returns it.
func waitEvent(t *testing.T, ns, kind, reason, note string) eventsv1.Event {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list eventsv1.EventList
		if err := suite.Admin.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Kind == kind && e.Reason == reason && strings.Contains(e.Note, note) {
				return e
			}
			seen = append(seen, fmt.Sprintf("%s/%s %s: %s", e.Regarding.Kind, e.Regarding.Name, e.Reason, e.Note))
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s Event on a %s in %s saying %q within 30s; events: %q", reason, kind, ns, note, seen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestInjectUnwatchedNamespace: an operator that watches only some
// namespaces (--namespace) admits Pods elsewhere — the ReplicaSet
// controller's as well as a user's — without their sidecar, with a warning
// and an Event on the Pod's controller saying why, and refuses only a Pod
// that requires its sidecar. (Before, its cache's "unknown namespace" error
// came back as a 500, which the API server takes as a refusal.)
func TestInjectUnwatchedNamespace(t *testing.T) {
	suite.NeedKCM(t)
	// Both namespaces hold a Ready contract: the package's reconciler
	// watches every namespace; the other operator only the first.
	watched, unwatched := suite.NewNamespace(t), suite.NewNamespace(t)
	readyContract(t, watched, "catalog")
	readyContract(t, unwatched, "catalog")
	label := startOperator(t, operatorUser, &injection.Injector{
		Options:    injection.SidecarOptions{Image: sidecarImage, PlainHTTP: true},
		Namespaces: []string{watched},
	})
	labelNamespace(t, watched, label)
	labelNamespace(t, unwatched, label)
	waitAdmission(t, watched, "catalog", "the other operator injects in the namespace it watches", injected)

	c, warns := warningClient(t)
	pod := restrictedPod(unwatched, "direct", map[string]string{injection.AnnotationContract: "catalog"})
	if err := c.Create(t.Context(), pod); err != nil {
		t.Fatalf("a Pod in a namespace the operator does not watch was refused: %v", err)
	}
	if sidecarOf(pod) != nil {
		t.Errorf("injected outside the watched namespaces: %+v", pod.Spec.InitContainers)
	}
	if !warns.contains("does not watch this namespace") || !warns.contains(injection.SkipNamespaceNotWatched) {
		t.Errorf("warnings %q do not say the namespace is not watched", warns.all())
	}
	strict := restrictedPod(unwatched, "strict", map[string]string{injection.AnnotationContract: "catalog", injection.AnnotationInjectPolicy: injection.InjectPolicyRequired})
	if err := c.Create(t.Context(), strict); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "failing condition: "+injection.SkipNamespaceNotWatched) {
		t.Errorf("required, namespace not watched: %v, want a refusal naming %s", err, injection.SkipNamespaceNotWatched)
	}

	// The ReplicaSet controller's Pods: admitted, and the ReplicaSet says why.
	scale(t, unwatched, "catalog", 1)
	for _, p := range podsOf(t, unwatched, "catalog", 1) {
		if sidecarOf(&p) != nil {
			t.Errorf("pod %s was injected outside the watched namespaces", p.Name)
		}
	}
	e := waitEvent(t, unwatched, "ReplicaSet", injection.ReasonSidecarNotInjected, injection.SkipNamespaceNotWatched)
	if e.Type != corev1.EventTypeWarning || !strings.HasPrefix(e.Regarding.Name, "catalog-") {
		t.Errorf("event %s on %s/%s, want a Warning on the catalog ReplicaSet", e.Type, e.Regarding.Kind, e.Regarding.Name)
	}
}

// grantCluster binds user to a ClusterRole with rules; the returned func
// takes the grant back.
func grantCluster(t *testing.T, user string, rules []rbacv1.PolicyRule) func() {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-injector-"}, Rules: rules}
	suite.Create(t, role)
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	suite.Create(t, binding)
	revoke := func() {
		_ = suite.Admin.Delete(t.Context(), binding)
		_ = suite.Admin.Delete(t.Context(), role)
	}
	t.Cleanup(revoke)
	return revoke
}

// TestInjectLookupFails: an operator whose cache cannot answer (its
// identity may get a ServiceContract but not list or watch them, so the
// informer never syncs) still injects, reading the contract from the API
// server within the API server's timeout; once the API server refuses that
// read too, an ordinary Pod is admitted without its sidecar, with a warning
// and an Event on its controller, and only a Pod that requires its sidecar
// is refused.
func TestInjectLookupFails(t *testing.T) {
	suite.NeedKCM(t)
	ns := suite.NewNamespace(t)
	readyContract(t, ns, "catalog")
	const user = "kubepact-injector-without-cache"
	grantCluster(t, user, []rbacv1.PolicyRule{{APIGroups: []string{eventsv1.GroupName}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}}})
	revoke := grantCluster(t, user, []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"servicecontracts"}, Verbs: []string{"get"}}})
	label := startOperator(t, user, &injection.Injector{Options: injection.SidecarOptions{Image: sidecarImage, PlainHTTP: true}})
	labelNamespace(t, ns, label)
	waitAdmission(t, ns, "catalog", "injected from the API server while the cache cannot sync", injected)

	revoke()
	waitAdmission(t, ns, "catalog", "admitted with a warning once the API server refuses the read too", func(pod *corev1.Pod, w *warnings) bool {
		return sidecarOf(pod) == nil && w.contains("could not be read") && w.contains(injection.SkipLookupFailed)
	})
	scale(t, ns, "catalog", 1)
	for _, p := range podsOf(t, ns, "catalog", 1) {
		if sidecarOf(&p) != nil {
			t.Errorf("pod %s was injected from a contract nothing could read", p.Name)
		}
	}
	waitEvent(t, ns, "ReplicaSet", injection.ReasonSidecarNotInjected, injection.SkipLookupFailed)
	strict := restrictedPod(ns, "strict", map[string]string{injection.AnnotationContract: "catalog", injection.AnnotationInjectPolicy: injection.InjectPolicyRequired})
	if err := suite.Admin.Create(t.Context(), strict, client.DryRunAll); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "failing condition: "+injection.SkipLookupFailed) {
		t.Errorf("required, contract unreadable: %v, want a refusal naming %s", err, injection.SkipLookupFailed)
	}
}

// TestInjectHostNetwork: a hostNetwork Pod would get a sidecar listening on
// its node's loopback; it is admitted without one, with a warning saying
// why, and refused with that reason when it requires its sidecar.
func TestInjectHostNetwork(t *testing.T) {
	needWebhook(t)
	ns := injectionNamespace(t, false) // the baseline standard forbids hostNetwork itself
	sc, _ := readyContract(t, ns, "catalog")
	waitAdmission(t, ns, sc.Name, "the webhook has seen the contract Ready", injected)
	c, warns := warningClient(t)
	host := func(name string, ann map[string]string) *corev1.Pod {
		p := restrictedPod(ns, name, ann)
		p.Spec.HostNetwork = true
		return p
	}
	pod := host("on-the-node", map[string]string{injection.AnnotationContract: sc.Name})
	if err := c.Create(t.Context(), pod); err != nil {
		t.Fatalf("a hostNetwork Pod was refused: %v", err)
	}
	if sidecarOf(pod) != nil || pod.Annotations[injection.AnnotationInjectedBundle] != "" {
		t.Errorf("a hostNetwork Pod was injected: %+v", pod.Spec.InitContainers)
	}
	if !warns.contains("uses hostNetwork") || !warns.contains("node's own loopback") {
		t.Errorf("warnings %q do not say why a hostNetwork Pod gets no sidecar", warns.all())
	}
	strict := host("strict", map[string]string{injection.AnnotationContract: sc.Name, injection.AnnotationInjectPolicy: injection.InjectPolicyRequired})
	err := c.Create(t.Context(), strict)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "uses hostNetwork") || !strings.Contains(err.Error(), "failing condition: "+injection.SkipHostNetwork) {
		t.Errorf("required, hostNetwork: %v, want a refusal saying why", err)
	}
}

// postReview sends review straight to the package's webhook server, as any
// process that reaches its port can: without a client certificate and
// without checking the server's.
func postReview(t *testing.T, review *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, string) {
	t.Helper()
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	url := "https://" + net.JoinHostPort(webhookHost, strconv.Itoa(webhookPort)) + injection.InjectorPath
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil {
		t.Fatalf("status %d: not an AdmissionReview answer: %v", resp.StatusCode, err)
	}
	// Everything the caller is told, the patch decoded.
	text := string(out.Response.Patch) + " " + strings.Join(out.Response.Warnings, " ") + " " + fmt.Sprint(out.Response.AuditAnnotations)
	if out.Response.Result != nil {
		text += " " + out.Response.Result.Message + " " + string(out.Response.Result.Reason)
	}
	return out.Response, text
}

func handMadeReview(t *testing.T, reqNS string, pod *corev1.Pod) *admissionv1.AdmissionReview {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "made-up", Operation: admissionv1.Create, Namespace: reqNS,
			Kind:     metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Object:   runtime.RawExtension{Raw: raw},
		},
	}
}

// TestInjectHandMadeReview: anything that reaches the webhook's port can
// POST an AdmissionReview of its own making. For a Pod of namespace B, the
// answer holds nothing about namespace A's contracts — however the review
// names A (as its namespace, in the contract annotation) — while a review
// for a Pod of A gets exactly the patch the API server would put in that
// Pod anyway.
func TestInjectHandMadeReview(t *testing.T) {
	needWebhook(t)
	a, b := injectionNamespace(t, false), injectionNamespace(t, false)
	sc, _ := readyContract(t, a, "catalog")
	waitAdmission(t, a, sc.Name, "the webhook has seen the contract Ready", injected)
	// A's data, as its Pods carry it.
	secrets := []string{a, sc.Status.Digest, sc.Status.ResolvedRef, strings.SplitN(sc.Status.ResolvedRef, "/", 2)[0]}
	if sc.Status.ToolSurfaceDigest != "" {
		secrets = append(secrets, sc.Status.ToolSurfaceDigest)
	}

	pod := func(ns, contract string) *corev1.Pod {
		p := restrictedPod(ns, "made-up", map[string]string{injection.AnnotationContract: contract})
		p.GenerateName, p.Name = "made-up-", ""
		return p
	}
	// The baseline: what a Pod of A is given by the API server.
	resp, text := postReview(t, handMadeReview(t, a, pod(a, "catalog")))
	if !resp.Allowed || !strings.Contains(text, sc.Status.Digest) {
		t.Fatalf("a review for a Pod of A: allowed=%v, answer %q; want the patch with A's digest", resp.Allowed, text)
	}

	withoutNS := pod(b, "catalog")
	withoutNS.Namespace = ""
	for _, tc := range []struct {
		name  string
		reqNS string
		pod   *corev1.Pod
	}{
		{"the review names A, its Pod is B's", a, pod(b, "catalog")},
		{"the review names B, its Pod is A's", b, pod(a, "catalog")},
		{"the annotation names A's contract", b, pod(b, a+"/catalog")},
		{"the annotation names A's contract, required", b, func() *corev1.Pod {
			p := pod(b, a+"/catalog")
			p.Annotations[injection.AnnotationInjectPolicy] = injection.InjectPolicyRequired
			return p
		}()},
		{"B has no such contract", b, pod(b, "catalog")},
		{"the Pod names no namespace", b, withoutNS},
		{"the review names none", "", pod(b, "catalog")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, text := postReview(t, handMadeReview(t, tc.reqNS, tc.pod))
			if len(resp.Patch) > 0 {
				t.Errorf("patched for a Pod of B: %s", resp.Patch)
			}
			// The annotation is the caller's own input; it may be quoted back.
			text = strings.ReplaceAll(text, a+"/catalog", "")
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("the answer %q carries A's %q", text, s)
				}
			}
		})
	}
}

// slowRegistry is a real HTTP proxy on loopback in front of reg that
// answers each request after delay: a registry across a network, not on
// the same host.
func slowRegistry(t *testing.T, reg *testregistry.Registry, delay time.Duration) string {
	t.Helper()
	target, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// TestInjectGitOpsOrder: a ServiceContract and its Deployment applied in
// one go, as a GitOps tool applies them, with the bundle in a registry
// 150 ms away: the first Pods the ReplicaSet controller makes have their
// sidecar, on the contract's digest. The webhook needs a resolved, valid
// bundle, not a bound target, and waits briefly for the reconciler's first
// resolution, which ends after the Pods are created.
func TestInjectGitOpsOrder(t *testing.T) {
	suite.NeedKCM(t)
	needWebhook(t)
	ns := injectionNamespace(t, true)
	reg := testregistry.New(t, nil)
	// A bundle of its own, so that no earlier pull of it is cached.
	bundleDir := catalogVariant(t, fmt.Sprintf("http://127.0.0.1:8080/gitops-%d", time.Now().UnixNano()))
	d := envtestsuite.Push(t, envtestsuite.PlainClient(t, nil), bundleDir, reg.Host+"/bundles/catalog:1.4.0")
	reg.ResetRequests()
	host := slowRegistry(t, reg, 150*time.Millisecond)
	sc := envtestsuite.NewContract(ns, "catalog", "oci://"+host+"/bundles/catalog:1.4.0", "catalog")
	dep := deployment(ns, "catalog", 2, map[string]string{injection.AnnotationContract: "catalog"})
	applied := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, obj := range []client.Object{sc, dep} {
		wg.Go(func() { errs[i] = suite.Admin.Create(t.Context(), obj) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pods := podsOf(t, ns, "catalog", 2)
	created := time.Since(applied)
	resolved := suite.WaitFor(t, client.ObjectKeyFromObject(sc), "resolved", func(sc *v1alpha1.ServiceContract) bool { return sc.Status.Digest != "" })
	t.Logf("2 Pods created %s after the apply; the contract resolved (%d registry requests) by %s after it; Ready=%v",
		created.Round(time.Millisecond), len(reg.Requests()), time.Since(applied).Round(time.Millisecond), envtestsuite.IsReady(resolved))
	for _, p := range pods {
		c := sidecarOf(&p)
		if c == nil {
			t.Errorf("pod %s, among the first, has no sidecar", p.Name)
			continue
		}
		if !slices.Contains(c.Args, "--bundle-digest="+d.String()) || p.Annotations[injection.AnnotationBundleDigest] != d.String() {
			t.Errorf("pod %s: sidecar args %q, annotations %v; want digest %s", p.Name, c.Args, p.Annotations, d)
		}
	}
}
