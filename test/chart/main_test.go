package chart

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"
)

// chartDir is the chart under test, from this package's directory.
var chartDir = filepath.Join("..", "..", "charts", "kubepact")

// The release every render uses: the naming contract is stated for it.
const (
	releaseName = "kubepact"
	releaseNS   = "kubepact-system"
)

var (
	helmBin, unittestBin string
	helmSkip             string
	restCfg              *rest.Config
	kubeconfig           string // envtest's admin kubeconfig, for helm
	envSkip              string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	helmBin, unittestBin = os.Getenv("KUBEPACT_HELM"), os.Getenv("KUBEPACT_HELM_UNITTEST")
	switch {
	case helmBin == "" || unittestBin == "":
		helmSkip = "KUBEPACT_HELM or KUBEPACT_HELM_UNITTEST is not set: run `make test` (or `make test-chart`), or `make helm-bins` and set both to bin/helm-<version> and bin/helm-unittest-<version>"
	default:
		// Named binaries that do not run are a failure, not a skip.
		for _, c := range [][]string{{helmBin, "version"}, {unittestBin, "--help"}} {
			if out, err := exec.Command(c[0], c[1]).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "%s %s: %v\n%s", c[0], c[1], err, out)
				return 1
			}
		}
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		envSkip = "KUBEBUILDER_ASSETS is not set: run `make test`, or `make envtest-assets` and KUBEBUILDER_ASSETS=bin/k8s/<version>"
		return m.Run()
	}
	if helmSkip != "" {
		envSkip = helmSkip
		return m.Run()
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		_ = os.Setenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60s")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: starting the control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "envtest: stopping the control plane: %v\n", err)
		}
	}()
	restCfg = cfg
	dir, err := os.MkdirTemp("", "kubepact-chart-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubeconfig dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "kubeconfig: %v\n", err)
		return 1
	}
	return m.Run()
}

func needHelm(t *testing.T) {
	t.Helper()
	if helmSkip != "" {
		t.Skip(helmSkip)
	}
}

func needControlPlane(t *testing.T) {
	t.Helper()
	if envSkip != "" {
		t.Skip(envSkip)
	}
}

// helm runs the helm binary and returns its standard output, or an error
// carrying its standard error.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helmBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// No repositories, plugins or caches from the machine's home.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// render is `helm template` of the chart for the contract's release, CRDs
// included, with extra arguments (--set, -f); it returns the objects.
func render(t *testing.T, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	args := append([]string{"template", releaseName, chartDir, "--namespace", releaseNS, "--include-crds"}, extra...)
	out, err := helm(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decode(out)
	if err != nil {
		t.Fatalf("rendered manifests: %v", err)
	}
	return objs
}

// decode splits a multi-document YAML stream into objects, skipping empty
// documents.
func decode(stream string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for i, doc := range strings.Split("\n"+stream, "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if string(js) == "null" {
			continue // comments only
		}
		// Through JSON, as the API machinery reads objects: integers stay int64.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// find returns the rendered object of kind and name, or nil.
func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// allOptions is the values file that turns every option of the chart on
// (lint, dry-run and the unit suites use it).
var allOptions = filepath.Join(chartDir, "ci", "all-options-values.yaml")
