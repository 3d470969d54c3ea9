//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// chartEnv names another chart directory to install (default
// charts/kubepact).
const chartEnv = "KUBEPACT_E2E_CHART"

// chartDir is the chart the suite installs.
func chartDir() string {
	if d := os.Getenv(chartEnv); d != "" {
		return d
	}
	return filepath.Join(repoRoot(), "charts", "kubepact")
}

// helmEnv names the helm binary (the Makefile's $(HELM), built by `make
// helm-bins`).
const helmEnv = "KUBEPACT_HELM"

// helmBin is the helm binary $KUBEPACT_HELM names.
func helmBin(t *testing.T) string {
	t.Helper()
	p := os.Getenv(helmEnv)
	if p == "" {
		t.Fatalf("%s is not set: run `make test-e2e` (it builds helm into bin/) or set it to a helm v3 binary", helmEnv)
	}
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file", helmEnv, p)
	}
	return p
}

// renderChart renders the chart as `helm install` would install it with
// the default values and extra, CRDs included.
func renderChart(t *testing.T, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	args := append([]string{"template", releaseName, chartDir(), "--namespace", installNamespace, "--include-crds"}, extra...)
	out := run(t, []string{"HELM_CACHE_HOME=" + t.TempDir(), "HELM_CONFIG_HOME=" + t.TempDir(), "HELM_DATA_HOME=" + t.TempDir()}, helmBin(t), args...)
	objs, err := decodeManifests([]byte(out))
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	return objs
}

// renderInstall is what the suite installs: the chart, rendered with the
// extra helm flags.
func renderInstall(t *testing.T, values ...string) []*unstructured.Unstructured {
	t.Helper()
	if _, err := os.Stat(filepath.Join(chartDir(), "Chart.yaml")); err != nil {
		t.Fatalf("no chart at %s (%v): the suite installs charts/kubepact; set %s to try another", chartDir(), err, chartEnv)
	}
	return renderChart(t, values...)
}

func decodeManifests(raw []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		out = append(out, u)
	}
}

// find returns the installed object of that kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func isCRD(u *unstructured.Unstructured) bool {
	return u.GetKind() == "CustomResourceDefinition" && u.GroupVersionKind().Group == "apiextensions.k8s.io"
}

// apply server-side applies objs as kubectl apply --server-side does:
// CRDs first, then, once they are Established, the rest. Namespaced
// objects without a namespace go in the install namespace, which is
// created when no object is it.
func apply(t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	if find(objs, "Namespace", installNamespace) == nil {
		ns := &unstructured.Unstructured{}
		ns.SetAPIVersion("v1")
		ns.SetKind("Namespace")
		ns.SetName(installNamespace)
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(ns), client.FieldOwner("kubepact-e2e"), client.ForceOwnership); err != nil {
			t.Fatalf("namespace %s: %v", installNamespace, err)
		}
	}
	ordered := slices.Clone(objs)
	slices.SortStableFunc(ordered, func(a, b *unstructured.Unstructured) int {
		rank := func(u *unstructured.Unstructured) int {
			switch {
			case isCRD(u):
				return 0
			case u.GetKind() == "Namespace":
				return 1
			}
			return 2
		}
		return rank(a) - rank(b)
	})
	crdsDone := false
	for _, o := range ordered {
		if !isCRD(o) && !crdsDone {
			crdsDone = true
			waitEstablished(t, c, objs)
		}
		o = o.DeepCopy()
		namespaced, err := c.IsObjectNamespaced(o)
		if err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if namespaced && o.GetNamespace() == "" {
			o.SetNamespace(installNamespace)
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("kubepact-e2e"), client.ForceOwnership); err != nil {
			t.Fatalf("server-side apply %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
	if !crdsDone {
		waitEstablished(t, c, objs)
	}
}

func waitEstablished(t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if !isCRD(o) {
			continue
		}
		eventually(t, "CRD "+o.GetName()+" Established", 60*time.Second, func() error {
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(o.GroupVersionKind())
			if err := c.Get(t.Context(), client.ObjectKey{Name: o.GetName()}, crd); err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return errNotYet
		})
	}
}

// deleteInstalled deletes objs (the CRDs last), as `helm uninstall`
// followed by deleting the CRDs does; the README's uninstall also deletes
// the Secret the operator keeps its webhook certificate in, which no chart
// template owns.
func deleteInstalled(t *testing.T, c client.Client, objs []*unstructured.Unstructured) {
	t.Helper()
	ordered := slices.Clone(objs)
	slices.SortStableFunc(ordered, func(a, b *unstructured.Unstructured) int {
		rank := func(u *unstructured.Unstructured) int {
			if isCRD(u) {
				return 1
			}
			return 0
		}
		return rank(a) - rank(b)
	})
	for _, o := range ordered {
		o = o.DeepCopy()
		if ns, _ := c.IsObjectNamespaced(o); ns && o.GetNamespace() == "" {
			o.SetNamespace(installNamespace)
		}
		if isCRD(o) {
			deleteWebhookSecret(t, c)
		}
		err := c.Delete(t.Context(), o, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

// deleteWebhookSecret is the README's `kubectl delete secret -n
// kubepact-system kubepact-webhook-cert --ignore-not-found`.
func deleteWebhookSecret(t *testing.T, c client.Client) {
	t.Helper()
	err := c.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: installNamespace, Name: webhookSecret}})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting Secret %s/%s: %v", installNamespace, webhookSecret, err)
	}
}

// assertNothingLeft checks that nothing of kubepact's is left: no object
// the install created, no object of any kind it created labelled
// app.kubernetes.io/name=kubepact (the operator's ReplicaSets and Pods
// too), no Secret the operator made (managed-by=kubepact), no
// ServiceContract API. It waits for the garbage collector.
func assertNothingLeft(t *testing.T, c client.Client, installed []*unstructured.Unstructured) {
	t.Helper()
	kinds := map[schema.GroupVersionKind]bool{
		{Group: "apps", Version: "v1", Kind: "ReplicaSet"}: true,
		{Version: "v1", Kind: "Pod"}:                       true,
		{Version: "v1", Kind: "Secret"}:                    true,
	}
	for _, o := range installed {
		kinds[o.GroupVersionKind()] = true
	}
	defer func() {
		// Not the chart's, and kept with the namespace the README's
		// uninstall keeps: leader election's Lease. Said, not failed.
		leases := &unstructured.UnstructuredList{}
		leases.SetAPIVersion("coordination.k8s.io/v1")
		leases.SetKind("LeaseList")
		if err := c.List(t.Context(), leases, client.InNamespace(installNamespace)); err == nil {
			for _, l := range leases.Items {
				t.Logf("left with namespace %s: Lease %s (leader election)", installNamespace, l.GetName())
			}
		}
	}()
	eventually(t, "nothing of kubepact left", 120*time.Second, func() error {
		var left []string
		for _, o := range installed {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(o.GroupVersionKind())
			ns := o.GetNamespace()
			if namespaced, _ := c.IsObjectNamespaced(o); namespaced && ns == "" {
				ns = installNamespace
			}
			err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: o.GetName()}, u)
			if err == nil {
				left = append(left, fmt.Sprintf("%s %s/%s", o.GetKind(), ns, o.GetName()))
			} else if !apierrors.IsNotFound(err) {
				return err
			}
		}
		for gvk := range kinds {
			if isCRD(&unstructured.Unstructured{Object: map[string]any{"apiVersion": gvk.GroupVersion().String(), "kind": gvk.Kind}}) {
				continue // the CRDs were checked by name above
			}
			for _, sel := range []client.MatchingLabels{{"app.kubernetes.io/name": "kubepact"}, {"app.kubernetes.io/managed-by": "kubepact"}} {
				list := &unstructured.UnstructuredList{}
				list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
				if err := c.List(t.Context(), list, sel); err != nil {
					if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
						continue
					}
					return fmt.Errorf("listing %s: %w", gvk.Kind, err)
				}
				for _, u := range list.Items {
					left = append(left, fmt.Sprintf("%s %s/%s (labelled %v)", u.GetKind(), u.GetNamespace(), u.GetName(), sel))
				}
			}
		}
		// The ServiceContract API went with its CRD.
		scs := &v1alpha1.ServiceContractList{}
		if err := c.List(t.Context(), scs); err == nil {
			left = append(left, fmt.Sprintf("the ServiceContract API still answers (%d objects)", len(scs.Items)))
		} else if !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("listing ServiceContracts: %w", err)
		}
		if len(left) > 0 {
			slices.Sort(left)
			return fmt.Errorf("left behind:\n  %s", strings.Join(left, "\n  "))
		}
		return nil
	})
}
