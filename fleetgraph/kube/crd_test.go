package kube_test

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
)

// pactoCRDs installs or removes the package's Pacto CRD (testdata).
var pactoCRDs = envtest.CRDInstallOptions{Paths: []string{"testdata"}, ErrorIfPathMissing: true}

// pactoServed reports whether discovery lists Pacto's API group.
func pactoServed(t *testing.T) bool {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(groups.Groups, func(g metav1.APIGroup) bool { return g.Name == kube.PactoGroup })
}

// TestPactoCRDInstalledAfterStart: a feed started while Pacto's CRD is
// absent reads Pacto CRs once the CRD is installed, and drops them (with
// no failing watch left behind) once it is removed — without a restart.
func TestPactoCRDInstalledAfterStart(t *testing.T) {
	needControlPlane(t)
	const ns = "crd-late"
	namespace(t, ns)
	if err := envtest.UninstallCRDs(adminCfg, pactoCRDs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the other tests read Pacto CRs
		if _, err := envtest.InstallCRDs(adminCfg, pactoCRDs); err != nil {
			t.Errorf("reinstalling the Pacto CRD: %v", err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); pactoServed(t); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Pacto CRD is still served after its deletion")
		}
	}
	l := startLive(t, adminCfg, &kube.Options{Namespaces: []string{ns}, ProbeInterval: 200 * time.Millisecond})
	key := fleetgraph.TargetKey(ns, kube.KindPacto, "late")
	if l.target(t, key) != nil {
		t.Fatal("a Pacto target exists before its CRD does")
	}

	if _, err := envtest.InstallCRDs(adminCfg, pactoCRDs); err != nil {
		t.Fatal(err)
	}
	pactoCR(t, ns, "late", map[string]any{"contractStatus": "Compliant"})
	l.eventually(t, "the Pacto CR created after its CRD was installed", func() (bool, string) {
		tv := l.target(t, key)
		return tv != nil && tv["compliance"] == string(fleetgraph.StatusCompliant), jsonOf(tv)
	})

	if err := envtest.UninstallCRDs(adminCfg, pactoCRDs); err != nil {
		t.Fatal(err)
	}
	l.eventually(t, "the Pacto CR gone with its CRD, no failing watch left (the fleet not partial)", func() (bool, string) {
		res := l.fresh(t, "pacto_fleet_get", map[string]any{"target": key})
		m := res["meta"].(map[string]any)
		return res["target"] == nil && m["completeness"] != fleetgraph.CompletenessPartial, jsonOf(res)
	})
}

// TestFeedWatchesOnlyItsKinds: with a real kube-controller-manager turning
// a Deployment into a ReplicaSet and Pods, the feed lists and watches only
// Deployments, StatefulSets, DaemonSets, Services, ServiceContracts and
// Pacto CRs — never Pods, ReplicaSets, Secrets or ConfigMaps — and still
// reports the workload.
func TestFeedWatchesOnlyItsKinds(t *testing.T) {
	needControlPlane(t)
	const ns = "kinds"
	namespace(t, ns)
	var mu sync.Mutex
	requested := map[string]bool{}
	probes := 0
	cfg := rest.CopyConfig(adminCfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if res := resourceOf(r.URL.Path); res != "" {
				mu.Lock()
				requested[res] = true
				if r.URL.Query().Get("limit") == "1" {
					probes++
				}
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	})
	l := startLive(t, cfg, &kube.Options{ProbeInterval: 200 * time.Millisecond})
	create(t, deployment(ns, "web", "r.example/web:1", 2, nil))
	contractNoBundle(t, ns, "web", "Deployment", "web")
	key := fleetgraph.TargetKey(ns, "Deployment", "web")
	l.eventually(t, "the Deployment's Pods, made by the controller manager", func() (bool, string) {
		var pods corev1.PodList
		if err := admin.List(t.Context(), &pods, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		return len(pods.Items) == 2, jsonOf(len(pods.Items))
	})
	l.eventually(t, "the workload target", func() (bool, string) {
		tv := l.target(t, key)
		return tv != nil, jsonOf(tv)
	})
	// Two more probe rounds (one-item lists of each kind): they must ask
	// for nothing else either.
	mu.Lock()
	after := probes + 12
	mu.Unlock()
	l.eventually(t, "two more probe rounds", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		return probes >= after, jsonOf(probes)
	})

	mu.Lock()
	defer mu.Unlock()
	got := slices.Sorted(func(yield func(string) bool) {
		for r := range requested {
			if !yield(r) {
				return
			}
		}
	})
	want := []string{"daemonsets", "deployments", "pactos", "servicecontracts", "services", "statefulsets"}
	if !slices.Equal(got, want) {
		t.Errorf("the feed asked the API server for %v; want exactly %v", got, want)
	}
}

// resourceOf is the resource a request path names (/api/v1/services,
// /apis/apps/v1/namespaces/x/deployments → services, deployments); empty
// for discovery paths.
func resourceOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	i := 2 // api/v1/<resource>
	if len(parts) > 0 && parts[0] == "apis" {
		i = 3 // apis/group/version/<resource>
	}
	if len(parts) > i+1 && parts[i] == "namespaces" {
		i += 2
	}
	if len(parts) <= i {
		return ""
	}
	return parts[i]
}
