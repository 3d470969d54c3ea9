package chart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestChartCopiesMatchConfig: the chart's CRDs, RBAC and webhook files are
// the copies `make manifests` makes of config/, byte for byte.
func TestChartCopiesMatchConfig(t *testing.T) {
	pairs := map[string]string{
		"config/rbac/role.yaml":                 "files/rbac/role.yaml",
		"config/rbac/leader_election_role.yaml": "files/rbac/leader_election_role.yaml",
		"config/webhook/manifests.yaml":         "files/webhook/manifests.yaml",
	}
	crds, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in config/crd/bases (%v)", err)
	}
	for _, c := range crds {
		pairs[filepath.Join("config", "crd", "bases", filepath.Base(c))] = filepath.Join("crds", filepath.Base(c))
	}
	chartCRDs, _ := filepath.Glob(filepath.Join(chartDir, "crds", "*.yaml"))
	if len(chartCRDs) != len(crds) {
		t.Errorf("chart has %d CRD files, config/crd/bases %d: run make manifests", len(chartCRDs), len(crds))
	}
	for src, dst := range pairs {
		want, err := os.ReadFile(filepath.Join("..", "..", src))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(chartDir, dst))
		if err != nil {
			t.Errorf("%s: %v (run make manifests)", dst, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("charts/kubepact/%s differs from %s: run make manifests", dst, src)
		}
	}
}

// TestLintStrict: helm lint --strict passes with the default values and with
// every option on.
func TestLintStrict(t *testing.T) {
	needHelm(t)
	for name, args := range map[string][]string{
		"defaults":    nil,
		"all-options": {"-f", allOptions},
	} {
		t.Run(name, func(t *testing.T) {
			out, err := helm(t, append([]string{"lint", "--strict", chartDir, "--namespace", releaseNS}, args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "0 chart(s) failed") {
				t.Fatalf("helm lint did not report success:\n%s", out)
			}
		})
	}
}

// TestUnitSuites runs the helm-unittest suites in charts/kubepact/tests.
func TestUnitSuites(t *testing.T) {
	needHelm(t)
	suites, _ := filepath.Glob(filepath.Join(chartDir, "tests", "*_test.yaml"))
	if len(suites) == 0 {
		t.Fatal("no helm-unittest suites in charts/kubepact/tests")
	}
	cmd := exec.CommandContext(t.Context(), unittestBin, "--strict", chartDir)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm-unittest: %v\n%s", err, out)
	}
	// The summary names every suite; none may be skipped silently.
	if !strings.Contains(string(out), "Test Suites: ") || strings.Contains(string(out), "failed") && !strings.Contains(string(out), " 0 failed") {
		t.Fatalf("helm-unittest did not report its suites passing:\n%s", out)
	}
	t.Logf("%s", out)
}

// TestSchemaRefusesUnknownAndBadValues: values.schema.json refuses a key it
// does not know, at the top and nested, and values of the wrong type or
// range, naming the key; the templates refuse what a schema cannot say
// clearly (the latest tag), with the reason.
func TestSchemaRefusesUnknownAndBadValues(t *testing.T) {
	needHelm(t)
	const schemaErr = "values don't meet the specifications of the schema"
	for _, tc := range []struct {
		set  string
		want []string
	}{
		{"bogus=1", []string{schemaErr, "additional properties 'bogus' not allowed"}},
		{"image.bogus=1", []string{schemaErr, "/image", "'bogus' not allowed"}},
		{"networkPolicy.apiServer.bogus=1", []string{schemaErr, "/networkPolicy/apiServer", "'bogus' not allowed"}},
		{"ingress.enabled=true", []string{schemaErr, "'ingress' not allowed"}},
		{"webhook.timeoutSeconds=30", []string{schemaErr, "/webhook/timeoutSeconds"}},
		{"webhook.failurePolicy=Sometimes", []string{schemaErr, "/webhook/failurePolicy"}},
		{"mcp.auth=basic", []string{schemaErr, "/mcp/auth"}},
		{"resources.limits.memory=1000000", []string{schemaErr, "/resources/limits/memory"}},
		{"image.digest=sha256:abc", []string{schemaErr, "/image/digest"}},
		{"replicaCount=two", []string{schemaErr, "/replicaCount"}},
		{"image.tag=latest", []string{`image.tag "latest" is not accepted: pin a version tag`}},
		{"mcp.auth=none", []string{"set mcp.allowUnauthenticated=true"}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			_, err := helm(t, "template", releaseName, chartDir, "--namespace", releaseNS, "--set", tc.set)
			if err == nil {
				t.Fatalf("--set %s was accepted", tc.set)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("--set %s: the refusal does not say %q:\n%v", tc.set, w, err)
				}
			}
		})
	}
}

// TestNamingContract: the names other suites (test/e2e) and the operator's
// defaults rely on, with the default values.
func TestNamingContract(t *testing.T) {
	needHelm(t)
	objs := render(t)
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	want := []string{
		"CustomResourceDefinition/servicecontracts.kubepact.dev",
		"ServiceAccount/kubepact-operator",
		"Deployment/kubepact-operator",
		"Service/kubepact-operator",
		"Service/kubepact-webhook",
		"ClusterRole/kubepact-operator",
		"ClusterRoleBinding/kubepact-operator",
		"ClusterRole/kubepact-fleet-reader",
		"Role/kubepact-operator",
		"RoleBinding/kubepact-operator",
		"Role/kubepact-leader-election",
		"RoleBinding/kubepact-leader-election",
		"MutatingWebhookConfiguration/kubepact-injector",
		"PodDisruptionBudget/kubepact-operator",
		"NetworkPolicy/kubepact-operator",
	}
	if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
		t.Errorf("rendered objects (-want +got):\n%s", diff)
	}
	for _, o := range objs {
		if o.GetKind() == "Ingress" {
			t.Errorf("an Ingress is rendered: %s", o.GetName())
		}
		if o.GetNamespace() != "" && o.GetNamespace() != releaseNS {
			t.Errorf("%s/%s is in namespace %q, not the release's", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	svcPorts := func(name string) map[string]any {
		o := find(objs, "Service", name)
		if o == nil {
			t.Fatalf("no Service %s", name)
		}
		ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
		m := map[string]any{}
		for _, p := range ports {
			p := p.(map[string]any)
			m[p["name"].(string)] = []any{p["port"], p["targetPort"]}
		}
		if typ, _, _ := unstructured.NestedString(o.Object, "spec", "type"); typ != "ClusterIP" {
			t.Errorf("Service %s is of type %q, want ClusterIP", name, typ)
		}
		return m
	}
	if diff := cmp.Diff(map[string]any{"mcp": []any{int64(8585), "mcp"}, "metrics": []any{int64(8080), "metrics"}}, svcPorts("kubepact-operator")); diff != "" {
		t.Errorf("Service kubepact-operator ports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"webhook": []any{int64(443), "webhook"}}, svcPorts("kubepact-webhook")); diff != "" {
		t.Errorf("Service kubepact-webhook ports (-want +got):\n%s", diff)
	}
	// The webhook configuration calls the webhook Service in the release
	// namespace, and the operator keeps the Secret and configuration the
	// RBAC names.
	mwc := find(objs, "MutatingWebhookConfiguration", "kubepact-injector")
	hooks, _, _ := unstructured.NestedSlice(mwc.Object, "webhooks")
	for _, h := range hooks {
		svc, _, _ := unstructured.NestedStringMap(h.(map[string]any), "clientConfig", "service")
		if svc["name"] != "kubepact-webhook" || svc["namespace"] != releaseNS {
			t.Errorf("webhook %v calls Service %s/%s", h.(map[string]any)["name"], svc["namespace"], svc["name"])
		}
	}
	args := containerArgs(t, find(objs, "Deployment", "kubepact-operator"))
	for _, a := range []string{"--webhook-cert-secret=kubepact-webhook-cert", "--webhook-config-name=kubepact-injector",
		"--webhook-service-name=kubepact-webhook", "--leader-elect", "--mcp-auth=kubernetes"} {
		if !slices.Contains(args, a) {
			t.Errorf("operator args lack %s: %q", a, args)
		}
	}
}

func containerArgs(t *testing.T, deploy *unstructured.Unstructured) []string {
	t.Helper()
	if deploy == nil {
		t.Fatal("no Deployment kubepact-operator")
	}
	cs, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	var args []string
	for _, a := range cs[0].(map[string]any)["args"].([]any) {
		args = append(args, a.(string))
	}
	return args
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
