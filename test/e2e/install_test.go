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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// helmEnv names the helm binary (the Makefile's $(HELM), built by `make
// helm-bins`); kubectlEnv names kubectl (the Makefile's $(KUBECTL), built
// by `make kubectl`).
const (
	helmEnv    = "KUBEPACT_HELM"
	kubectlEnv = "KUBEPACT_KUBECTL"
)

// toolBin is the executable env names.
func toolBin(t *testing.T, env, make string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set: run `make test-e2e` (it builds it into bin/) or set it (`make %s`)", env, make)
	}
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("%s=%s is not an executable file", env, p)
	}
	return p
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

// releaseObjects is what the release installed: its manifest (`helm get
// manifest`) and the CRD of the chart's crds/, which helm keeps apart.
func releaseObjects(t *testing.T, helm string, env []string) []*unstructured.Unstructured {
	t.Helper()
	out := run(t, env, helm, "get", "manifest", releaseName, "--namespace", installNamespace)
	objs, err := decodeManifests([]byte(out))
	if err != nil {
		t.Fatalf("helm get manifest: %v", err)
	}
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	crd.SetName(crdName)
	return append(objs, crd)
}

// earlierCheckout is a checkout of an earlier chart, as a user who
// installed before the CRD changed has: this repository's chart with the
// CRD of testdata/servicecontracts-before-status-pods.yaml in its crds/.
func earlierCheckout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	chart := filepath.Join(dir, "charts", "kubepact")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(repoRoot(), "charts", "kubepact"))); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(repoRoot(), "test", "e2e", "testdata", "servicecontracts-before-status-pods.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chart, "crds", "kubepact.dev_servicecontracts.yaml"), old, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// crdStatusFields are the fields of the served ServiceContract CRD's
// status schema.
func crdStatusFields(t *testing.T, c client.Client) []string {
	t.Helper()
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := c.Get(t.Context(), client.ObjectKey{Name: crdName}, crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var fields []string
	for _, v := range versions {
		props, _, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema", "properties", "status", "properties")
		for k := range props {
			fields = append(fields, k)
		}
	}
	slices.Sort(fields)
	return fields
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
