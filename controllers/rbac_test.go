package controllers_test

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/envtestsuite"
)

// TestOperatorRBACIsNoMore runs, as the operator's ServiceAccount bound to
// the generated ClusterRole, what the reconciler must never do. (That it is
// enough is shown by every other test here: the manager under test runs with
// exactly this identity.)
func TestOperatorRBACIsNoMore(t *testing.T) {
	ns := suite.NewNamespace(t)
	op, err := client.New(suite.OperatorConfig, client.Options{Scheme: suite.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	sc := envtestsuite.NewContract(ns, "rbac", "oci://registry.example.com/x:1", "x")
	suite.Create(t, sc)
	suite.Create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"k": "v"}})

	// Allowed: what the reconciler does.
	if err := op.Get(t.Context(), client.ObjectKeyFromObject(sc), &v1alpha1.ServiceContract{}); err != nil {
		t.Errorf("get ServiceContract: %v", err)
	}
	if err := op.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "creds"}, &corev1.Secret{}); err != nil {
		t.Errorf("get a Secret by name: %v", err)
	}
	pods := &metav1.PartialObjectMetadataList{}
	pods.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := op.List(t.Context(), pods, client.InNamespace(ns)); err != nil {
		t.Errorf("list Pods' metadata: %v", err)
	}

	forbidden := map[string]func() error{
		"list Secrets": func() error { return op.List(t.Context(), &corev1.SecretList{}, client.InNamespace(ns)) },
		"list ConfigMaps": func() error {
			return op.List(t.Context(), &corev1.ConfigMapList{}, client.InNamespace(ns))
		},
		"update a ServiceContract's spec": func() error {
			cp := sc.DeepCopy()
			cp.Spec.Suspend = true
			return op.Update(t.Context(), cp)
		},
		"delete a ServiceContract": func() error { return op.Delete(t.Context(), sc.DeepCopy()) },
		"create a Deployment":      func() error { w := workload(ns, "intruder"); return op.Create(t.Context(), w) },
		"delete a Service": func() error {
			return op.Delete(t.Context(), &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x"}})
		},
		"create a Secret": func() error {
			return op.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}})
		},
		// Pods: list and watch only (the injected-Pod report); never
		// one by name, never a write.
		"get a Pod": func() error {
			return op.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "p"}, &corev1.Pod{})
		},
		"patch a Pod": func() error {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
			return op.Patch(t.Context(), p, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`)))
		},
		"delete a Pod": func() error {
			return op.Delete(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}})
		},
		// The webhook's certificate rights name one Secret and one webhook
		// configuration.
		"update another Secret in the operator's namespace": func() error {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "other"}}
			if err := suite.Admin.Create(t.Context(), s); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return op.Update(t.Context(), s)
		},
		"list Secrets in the operator's namespace": func() error {
			return op.List(t.Context(), &corev1.SecretList{}, client.InNamespace(operatorNamespace))
		},
		"list webhook configurations": func() error {
			return op.List(t.Context(), &admissionregistrationv1.MutatingWebhookConfigurationList{})
		},
		"create a webhook configuration": func() error {
			return op.Create(t.Context(), &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "intruder"}})
		},
	}
	for what, do := range forbidden {
		if err := do(); !apierrors.IsForbidden(err) {
			t.Errorf("%s as the operator: %v, want Forbidden", what, err)
		}
	}
}
