package chart

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
)

// optionalAPIs are the groups of the kinds the chart renders only for
// add-ons the cluster may lack (cert-manager, prometheus-operator); envtest
// serves neither, so those objects cannot be dry-run here and are listed.
var optionalAPIs = []string{"cert-manager.io", "monitoring.coreos.com"}

// TestServerSideDryRun renders the chart and sends every manifest to the
// real API server: the CRDs are applied for real and waited for until
// Established, then every other object is applied with dryRun=All, so the
// API server's validation and admission run on it without storing it.
func TestServerSideDryRun(t *testing.T) {
	needControlPlane(t)
	for name, args := range map[string][]string{"defaults": nil, "all-options": {"-f", allOptions}} {
		t.Run(name, func(t *testing.T) {
			skipped := dryRunRendered(t, render(t, args...))
			if name == "defaults" && len(skipped) > 0 {
				t.Errorf("the default values render add-on kinds: %v", skipped)
			}
		})
	}
}

// dryRunRendered sends rendered manifests to the real API server: the CRDs
// are applied for real and waited for until Established, every other object
// is applied with dryRun=All. It returns the objects of optional add-on
// APIs envtest does not serve, and checks that nothing but the CRDs was
// stored.
func dryRunRendered(t *testing.T, objs []*unstructured.Unstructured) (skipped []string) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	// The release namespace exists before a chart is installed into it.
	_, err = cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: releaseNS}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var crds, rest []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o)
		} else {
			rest = append(rest, o)
		}
	}
	if len(crds) == 0 {
		t.Fatal("no CRDs rendered with --include-crds")
	}
	crdGVR := apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	for _, c := range crds {
		if _, err := dyn.Resource(crdGVR).Apply(t.Context(), c.GetName(), c, metav1.ApplyOptions{FieldManager: "kubepact-chart-test", Force: true}); err != nil {
			t.Fatalf("applying CRD %s: %v", c.GetName(), err)
		}
		waitEstablished(t, dyn, c.GetName())
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(restCfg)))
	for _, o := range rest {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			if meta.IsNoMatchError(err) && slices.Contains(optionalAPIs, gvk.Group) {
				skipped = append(skipped, fmt.Sprintf("%s/%s", gvk.Kind, o.GetName()))
				continue
			}
			t.Errorf("%s %s: %v", gvk, o.GetName(), err)
			continue
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if o.GetNamespace() == "" {
				t.Errorf("%s %s has no namespace", gvk.Kind, o.GetName())
				continue
			}
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		got, err := ri.Apply(t.Context(), o.GetName(), o, metav1.ApplyOptions{FieldManager: "kubepact-chart-test", Force: true, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Errorf("server-side dry-run of %s %s: %v", gvk.Kind, o.GetName(), err)
			continue
		}
		if got.GetName() != o.GetName() {
			t.Errorf("dry-run of %s %s answered %s", gvk.Kind, o.GetName(), got.GetName())
		}
	}
	t.Logf("dry-run %d objects; not served by envtest (optional add-on APIs): %v", len(rest)-len(skipped), skipped)
	// Nothing but the CRDs was stored.
	if _, err := cs.AppsV1().Deployments(releaseNS).Get(t.Context(), "kubepact-operator", metav1.GetOptions{}); err == nil {
		t.Error("the dry-run stored the Deployment")
	}
	return skipped
}

func waitEstablished(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	gvr := apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
	err := wait.PollUntilContextCancel(t.Context(), 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s never became Established: %v", name, err)
	}
}

func apiextensionsGVR() schema.GroupVersionResource {
	return apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}
