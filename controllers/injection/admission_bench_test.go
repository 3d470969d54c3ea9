package injection_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/test/envtestsuite"
)

// BenchmarkAdmission measures what the webhook adds to a Pod's admission
// through the real API server: the same dry-run Pod creation in a namespace
// opted in to injection (the API server calls the webhook over TLS, which
// reads the contract from the cache and builds the sidecar) and in one that
// is not (no call). Compare the two in one run:
//
//	KUBEBUILDER_ASSETS=… go test ./controllers/injection -run '^$' -bench Admission -benchmem
func BenchmarkAdmission(b *testing.B) {
	suite.NeedControlPlane(b)
	ctx := b.Context()
	rot := newRotator()
	mgr, err := ctrl.NewManager(suite.OperatorConfig, ctrl.Options{
		Scheme: suite.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, WebhookServer: webhookServer(rot),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := injection.SetupInjector(mgr, &injection.Injector{Options: injection.SidecarOptions{Image: sidecarImage}}, rot); err != nil {
		b.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("manager: %v", err)
		}
	})

	enabled, plain := injectionNamespace(b, false), suite.NewNamespace(b)
	// A resolved, valid contract, as the reconciler would leave it (no
	// reconciler runs here: only the webhook is measured).
	sc := envtestsuite.NewContract(enabled, "catalog", "oci://registry.example.com/bundles/catalog:1.4.0", "catalog")
	suite.Create(b, sc)
	digest := "sha256:" + strings.Repeat("ab", 32)
	sc.Status.ResolvedRef, sc.Status.Digest = "registry.example.com/bundles/catalog:1.4.0@"+digest, digest
	sc.Status.ObservedGeneration = sc.Generation
	for _, typ := range []string{v1alpha1.ConditionBundleResolved, v1alpha1.ConditionContractValid, v1alpha1.ConditionReady} {
		sc.Status.Conditions = append(sc.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonSucceeded, Message: "ok", ObservedGeneration: sc.Generation, LastTransitionTime: metav1.Now()})
	}
	if err := suite.Admin.Status().Update(ctx, sc); err != nil {
		b.Fatal(err)
	}
	admit := func(ns string) *corev1.Pod {
		pod := restrictedPod(ns, "bench", map[string]string{injection.AnnotationContract: "catalog"})
		if err := suite.Admin.Create(ctx, pod, client.DryRunAll); err != nil {
			b.Fatal(err)
		}
		return pod
	}
	deadline := time.Now().Add(60 * time.Second)
	for sidecarOf(admit(enabled)) == nil {
		if time.Now().After(deadline) {
			b.Fatal("the webhook injected nothing within 60s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Run("injected", func(b *testing.B) {
		for b.Loop() {
			if sidecarOf(admit(enabled)) == nil {
				b.Fatal("not injected")
			}
		}
	})
	b.Run("not-enabled", func(b *testing.B) {
		for b.Loop() {
			if sidecarOf(admit(plain)) != nil {
				b.Fatal("injected in a namespace not opted in")
			}
		}
	})
}
