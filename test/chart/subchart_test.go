package chart

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// parentChart writes, in a temporary directory, an umbrella chart whose
// only dependency is charts/kubepact (by a file:// repository, as a user
// vendoring the chart writes it) and which sets a global value of its own,
// then runs `helm dependency build` on it. It returns the parent's directory.
func parentChart(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	chart := "apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n" +
		"  - name: " + meta.Name + "\n    version: " + meta.Version + "\n    repository: file://" + abs + "\n"
	values := "global:\n  team: platform\n  imageRegistry: registry.example\n"
	for name, body := range map[string]string{"Chart.yaml": chart, "values.yaml": values} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := helm(t, "dependency", "build", dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kindNames lists the objects as kind/namespace/name, sorted.
func kindNames(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
	}
	slices.Sort(out)
	return out
}

// TestAsDependencyOfParentChart: Helm hands every subchart the release's
// `global` values before it checks them against the subchart's schema, so
// a chart whose schema refuses unknown top-level keys must declare
// `global`, or no umbrella chart can depend on it. The parent renders the
// same objects as the chart alone, its unknown keys under `kubepact` are
// still refused, and (with a control plane) its manifests pass the same
// server-side dry-run as the chart's.
func TestAsDependencyOfParentChart(t *testing.T) {
	needHelm(t)
	parent := parentChart(t)
	out, err := helm(t, "template", releaseName, parent, "--namespace", releaseNS, "--include-crds")
	if err != nil {
		t.Fatalf("the parent chart does not render: %v", err)
	}
	objs, err := decode(out)
	if err != nil {
		t.Fatalf("rendered manifests: %v", err)
	}
	if got, want := kindNames(objs), kindNames(render(t)); !slices.Equal(got, want) {
		t.Errorf("as a dependency the chart renders\n%s\nalone it renders\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if find(objs, "Deployment", "kubepact-operator") == nil {
		t.Fatal("the parent rendered no Deployment kubepact-operator")
	}

	t.Run("values under the dependency's name reach it", func(t *testing.T) {
		out, err := helm(t, "template", releaseName, parent, "--namespace", releaseNS, "--set", "kubepact.replicaCount=3")
		if err != nil {
			t.Fatal(err)
		}
		objs, err := decode(out)
		if err != nil {
			t.Fatal(err)
		}
		d := find(objs, "Deployment", "kubepact-operator")
		if d == nil {
			t.Fatal("no Deployment kubepact-operator")
		}
		if n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); n != 3 {
			t.Errorf("spec.replicas = %d; want 3 from --set kubepact.replicaCount=3", n)
		}
	})

	t.Run("unknown keys are still refused", func(t *testing.T) {
		for _, tc := range []struct{ set, want string }{
			{"kubepact.bogus=1", "additional properties 'bogus' not allowed"},
			{"kubepact.image.bogus=1", "'bogus' not allowed"},
			{"kubepact.replicaCount=two", "/replicaCount"},
		} {
			_, err := helm(t, "template", releaseName, parent, "--namespace", releaseNS, "--set", tc.set)
			if err == nil {
				t.Errorf("--set %s was accepted", tc.set)
				continue
			}
			for _, w := range []string{"values don't meet the specifications of the schema", "kubepact", tc.want} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("--set %s: the refusal does not say %q:\n%v", tc.set, w, err)
				}
			}
		}
	})

	t.Run("server-side dry-run", func(t *testing.T) {
		needControlPlane(t)
		if skipped := dryRunRendered(t, objs); len(skipped) > 0 {
			t.Errorf("the default values render add-on kinds: %v", skipped)
		}
	})
}
