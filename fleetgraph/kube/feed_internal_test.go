package kube

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"
)

// flakyLoader is a sub-step fake: it fails the first fails reads, then
// loads the bundle directory it was given.
type flakyLoader struct {
	mu    sync.Mutex
	fails int
	dir   string
	reads int
}

func (l *flakyLoader) Load(_ context.Context, _ string) (*bundle.Bundle, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	if l.reads <= l.fails {
		return nil, errors.New("registry unavailable: connection refused")
	}
	return bundle.LoadDir(l.dir, nil)
}

const testDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

func readyContract(ns, name, service string) *v1alpha1.ServiceContract {
	return &v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ServiceContractSpec{TargetRef: v1alpha1.TargetReference{Kind: KindDeployment, Name: name}},
		Status: v1alpha1.ServiceContractStatus{Digest: testDigest, ResolvedRef: "registry.example/org/" + service + ":1@" + testDigest,
			Contract:   &v1alpha1.ContractSummary{Service: service, Version: "1.0.0"},
			Conditions: []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue}}}}
}

// newTestFeed is a Feed whose event handling runs without an API server.
func newTestFeed(t *testing.T, loader BundleLoader) (*Feed, *fleetgraph.Builder) {
	t.Helper()
	b := fleetgraph.NewBuilder(nil)
	f, err := NewFeed(&rest.Config{Host: "https://127.0.0.1:1"}, b, &Options{Bundles: loader})
	if err != nil {
		t.Fatal(err)
	}
	f.ctx = t.Context()
	f.retry = 10 * time.Millisecond
	return f, b
}

// TestSharedRevisionAndRetargeting: two ServiceContracts holding one
// digest are one revision, kept until the last goes; a contract moved to
// another workload moves its target.
func TestSharedRevisionAndRetargeting(t *testing.T) {
	f, b := newTestFeed(t, nil)
	a, c := readyContract("ns", "a", "pay"), readyContract("ns", "c", "pay")
	f.mu.Lock()
	f.contract(a, false)
	f.contract(c, false)
	f.mu.Unlock()
	if _, revs, tgts := b.Flush().Counts(); revs != 1 || tgts != 2 {
		t.Fatalf("two contracts on one digest: %d revisions, %d targets; want 1 and 2", revs, tgts)
	}
	moved := readyContract("ns", "a", "pay")
	moved.Spec.TargetRef.Name = "elsewhere"
	f.mu.Lock()
	f.contract(moved, false)
	f.contract(c, true)
	f.mu.Unlock()
	snap := b.Flush()
	if _, revs, tgts := snap.Counts(); revs != 1 || tgts != 1 {
		t.Fatalf("after moving a and deleting c: %d revisions, %d targets; want 1 and 1", revs, tgts)
	}
	if res, _ := snap.Get(fleetgraph.GetQuery{Target: fleetgraph.TargetKey("ns", KindDeployment, "elsewhere")}); !res.Found {
		t.Error("the moved contract's new target is missing")
	}
	f.mu.Lock()
	f.contract(moved, true)
	f.mu.Unlock()
	if _, revs, tgts := b.Flush().Counts(); revs != 0 || tgts != 0 {
		t.Fatalf("after deleting both: %d revisions, %d targets; want none", revs, tgts)
	}
}

// TestRevisionScopesFollowPublishers: ServiceContracts in two namespaces
// on one digest publish one revision scoped to both namespaces, whatever
// order their events come in; deleting one leaves the revision scoped to
// the other; deleting both removes it.
func TestRevisionScopesFollowPublishers(t *testing.T) {
	f, b := newTestFeed(t, nil)
	x, y := readyContract("team-x", "pay", "pay"), readyContract("team-y", "pay", "pay")
	scopes := func() []string {
		t.Helper()
		res, err := b.Flush().Get(fleetgraph.GetQuery{Service: fleetgraph.ServiceKey("registry.example/org", "pay")})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found {
			return nil
		}
		if len(res.Revisions) != 1 {
			t.Fatalf("%d revisions, want 1", len(res.Revisions))
		}
		return res.Revisions[0].Scopes
	}
	f.mu.Lock()
	f.contract(y, false)
	f.contract(x, false)
	f.mu.Unlock()
	if diff := cmp.Diff([]string{"team-x", "team-y"}, scopes()); diff != "" {
		t.Fatalf("published from both namespaces (-want +got):\n%s", diff)
	}
	f.mu.Lock()
	f.contract(x, true)
	f.mu.Unlock()
	if diff := cmp.Diff([]string{"team-y"}, scopes()); diff != "" {
		t.Fatalf("after team-x's contract went (-want +got):\n%s", diff)
	}
	f.mu.Lock()
	f.contract(x, false)
	f.contract(y, true)
	f.mu.Unlock()
	if diff := cmp.Diff([]string{"team-x"}, scopes()); diff != "" {
		t.Fatalf("after team-x's came back and team-y's went (-want +got):\n%s", diff)
	}
	f.mu.Lock()
	f.contract(x, true)
	f.mu.Unlock()
	if got := scopes(); got != nil {
		t.Fatalf("after both went the revision is still there, scoped to %v", got)
	}
}

// TestBundleReadRetried: a bundle that cannot be read leaves the revision
// without dependencies and the source partial, saying so; the read is
// retried, and once it succeeds the dependencies are there and the
// limitation is gone.
func TestBundleReadRetried(t *testing.T) {
	dir := t.TempDir()
	doc := "pactoVersion: \"2.0\"\nservice:\n  name: pay\n  version: 1.0.0\ndependencies:\n  - name: ledger\n    ref: oci://registry.example/org/ledger:1\n    required: true\n    compatibility: ^1.0.0\n"
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	loader := &flakyLoader{fails: 2, dir: dir}
	f, b := newTestFeed(t, loader)
	close(f.synced)
	f.mu.Lock()
	f.contract(readyContract("ns", "pay", "pay"), false)
	f.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	sawPartial := false
	for {
		f.publishState(nil)
		snap := b.Flush()
		res, err := snap.Get(fleetgraph.GetQuery{Service: "pay"})
		if err != nil {
			t.Fatal(err)
		}
		lims := snap.Meta().Limitations
		unread := false
		for _, l := range lims {
			unread = unread || strings.Contains(l.Message, "could not be read")
		}
		sawPartial = sawPartial || (unread && snap.Meta().Completeness == fleetgraph.CompletenessPartial)
		if len(res.Dependencies) == 1 && !unread {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d reads: dependencies %+v, limitations %+v", loader.reads, res.Dependencies, lims)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !sawPartial || loader.reads != 3 {
		t.Errorf("saw the failure as partial: %v; reads %d (want 3: two failures, one success)", sawPartial, loader.reads)
	}
}

// TestLagCountsOnlyEventsThatQueueChanges: an event that queues a change
// is observed once the Builder applies it; an event that changes no
// record (a Deployment no contract binds) is not observed at all.
func TestLagCountsOnlyEventsThatQueueChanges(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := fleetgraph.NewBuilder(nil)
	f, err := NewFeed(&rest.Config{Host: "https://127.0.0.1:1"}, b, &Options{Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	go f.lag.run(t.Context(), b, f.metrics)
	h := f.handler(resource{name: "deployments.apps"})
	h.OnAdd(deploymentObj("ns", "unbound"), false)
	f.mu.Lock()
	f.contract(readyContract("ns", "bound", "pay"), false)
	f.mu.Unlock()
	h.OnAdd(deploymentObj("ns", "bound"), false)
	b.Flush()
	deadline := time.Now().Add(10 * time.Second)
	for {
		count := uint64(0)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "kubepact_fleet_feed_lag_seconds" {
				count = mf.GetMetric()[0].GetHistogram().GetSampleCount()
			}
		}
		if count == 1 {
			return
		}
		if count > 1 || time.Now().After(deadline) {
			t.Fatalf("lag samples: %d; want exactly 1 (the bound Deployment's event)", count)
		}
		// The observer may have subscribed after that Flush: any later
		// batch observes every event that arrived before it.
		b.SetSource(fleetgraph.SourceState{ID: "tick", Status: fleetgraph.SourceAvailable})
		b.Flush()
		time.Sleep(5 * time.Millisecond)
	}
}

func deploymentObj(ns, name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// TestServiceIndexFollowsServiceRef: a Service event reaches the target of
// the contract naming it, and no longer once the contract names another.
func TestServiceIndexFollowsServiceRef(t *testing.T) {
	f, b := newTestFeed(t, nil)
	sc := readyContract("ns", "web", "web")
	sc.Spec.ServiceRef = &v1alpha1.LocalObjectReference{Name: "front"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "front"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP}}
	key := fleetgraph.TargetKey("ns", KindDeployment, "web")
	runtimeOf := func() string {
		res, err := b.Flush().Get(fleetgraph.GetQuery{Target: key})
		if err != nil || res.Target == nil {
			t.Fatalf("target %s: %v %+v", key, err, res)
		}
		return string(res.Target.ObservedRuntime)
	}
	f.mu.Lock()
	f.contract(sc, false)
	f.mu.Unlock()
	if rt := runtimeOf(); !strings.Contains(rt, `"service":{"name":"front","exists":false}`) {
		t.Fatalf("before the Service: %s", rt)
	}
	f.mu.Lock()
	f.service(svc, false)
	f.mu.Unlock()
	if rt := runtimeOf(); !strings.Contains(rt, `"service":{"name":"front","exists":true,"type":"ClusterIP"}`) {
		t.Fatalf("after the Service: %s", rt)
	}
	other := readyContract("ns", "web", "web")
	other.Spec.ServiceRef = &v1alpha1.LocalObjectReference{Name: "back"}
	f.mu.Lock()
	f.contract(other, false)
	n := len(f.bySvc)
	_, stale := f.bySvc[nsName{"ns", "front"}]
	f.mu.Unlock()
	if n != 1 || stale {
		t.Errorf("after the contract moved to Service back: the index holds %d Services (front still: %v); want back alone", n, stale)
	}
}

// TestConfigMapBundlesSaySoInMeta: a revision whose bundle sits in a
// ConfigMap has no dependencies (no ConfigMap is read), and the answers'
// limitations say so rather than staying silent.
func TestConfigMapBundlesSaySoInMeta(t *testing.T) {
	f, b := newTestFeed(t, &flakyLoader{})
	close(f.synced)
	sc := readyContract("ns", "cm", "cm")
	sc.Spec.Bundle.ConfigMapRef = &v1alpha1.LocalObjectReference{Name: "cm-bundle"}
	sc.Status.ResolvedRef = "configmap/cm-bundle"
	f.mu.Lock()
	f.contract(sc, false)
	f.mu.Unlock()
	f.publishState(nil)
	snap := b.Flush()
	if _, revs, _ := snap.Counts(); revs != 1 {
		t.Fatalf("revisions: %d, want 1", revs)
	}
	found := false
	for _, l := range snap.Meta().Limitations {
		found = found || strings.Contains(l.Message, "1 revisions in namespace ns come from ConfigMap bundles") && l.Scope == "ns"
	}
	if !found {
		t.Errorf("limitations %+v say nothing of the ConfigMap bundle", snap.Meta().Limitations)
	}
}

// TestLimitationsScopedToTheirNamespace: limitations about a namespace (a
// watch failing there, bundles published there that cannot be read, a
// ServiceContract there whose status is unusable) are shown only to
// readers of that namespace, and nothing a reader of another namespace is
// shown names it; a limitation about the whole cluster (a resource that
// cannot be watched anywhere) is shown to every reader.
func TestLimitationsScopedToTheirNamespace(t *testing.T) {
	f, b := newTestFeed(t, &flakyLoader{fails: 1 << 30})
	f.opts.Namespaces = []string{"team-x", "team-y"}
	f.health.watched(builtin)
	close(f.synced)
	broken := readyContract("team-y", "broken", "broken")
	broken.Status.Contract = nil
	f.mu.Lock()
	f.contract(readyContract("team-x", "pay", "pay"), false) // its bundle cannot be read
	f.contract(broken, false)
	f.mu.Unlock()
	f.watchFailed("*v1.Deployment", "team-x", apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("cannot list deployments in namespace team-x")))
	f.watchFailed("*v1.Service", "", errors.New("dial tcp 127.0.0.1:6443: connection refused"))
	// An API server that does not answer is about the cluster, whichever
	// namespace the request named.
	f.watchFailed("*v1.StatefulSet", "team-y", errors.New("dial tcp 127.0.0.1:6443: connection refused"))
	var snap *fleetgraph.Snapshot
	for range 200 { // the bundle read fails in the background
		time.Sleep(10 * time.Millisecond)
		f.publishState(nil)
		if snap = b.Flush(); strings.Contains(jsonOf(t, snap.Meta()), "could not be read") {
			break
		}
	}
	type lim struct{ Subject, Scope string }
	got := func(s *fleetgraph.Snapshot) []lim {
		var out []lim
		for _, l := range s.Meta().Limitations {
			if l.Source == DefaultSourceID && l.Subject != "" {
				out = append(out, lim{l.Subject, l.Scope})
			}
		}
		return out
	}
	all := []lim{{"services", ""}, {"statefulsets.apps", ""}, {"deployments.apps", "team-x"}, {"bundles", "team-x"}, {"team-y/broken", "team-y"}}
	if diff := cmp.Diff(all, got(snap)); diff != "" {
		t.Fatalf("an unrestricted reader's limitations (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		ns, hidden string
		want       []lim
	}{
		{"team-x", "team-y", []lim{{"services", ""}, {"statefulsets.apps", ""}, {"deployments.apps", "team-x"}, {"bundles", "team-x"}}},
		{"team-y", "team-x", []lim{{"services", ""}, {"statefulsets.apps", ""}, {"team-y/broken", "team-y"}}},
		{"team-z", "team-", []lim{{"services", ""}, {"statefulsets.apps", ""}}},
	} {
		view := snap.Restrict(fleetgraph.OnlyScopes(c.ns))
		if diff := cmp.Diff(c.want, got(view)); diff != "" {
			t.Errorf("a reader of %s: limitations (-want +got):\n%s", c.ns, diff)
		}
		if m := jsonOf(t, view.Meta()); strings.Contains(m, c.hidden) {
			t.Errorf("a reader of %s is shown a namespace it cannot see (%s): %s", c.ns, c.hidden, m)
		}
		if got := view.Meta().Completeness; got != fleetgraph.CompletenessPartial {
			t.Errorf("a reader of %s: completeness %s, want partial (a resource cannot be watched)", c.ns, got)
		}
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestSourceErrorReadsStatusNotText: an API server's answer is classified
// by its Status reason; the same words in an error of another type are
// not taken for it (they were, when the text was matched).
func TestSourceErrorReadsStatusNotText(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"forbidden", apierrors.NewForbidden(gr, "", errors.New("cannot list")), fleetgraph.ErrAuthFailed},
		{"unauthorized", apierrors.NewUnauthorized("token expired"), fleetgraph.ErrAuthFailed},
		{"not found", apierrors.NewNotFound(gr, "pay"), fleetgraph.ErrNotFound},
		{"the words alone", errors.New("deployments is forbidden: not found, unauthorized"), fleetgraph.ErrUnavailable},
		{"cancelled", context.Canceled, fleetgraph.ErrCancelled},
	} {
		if got := sourceError(tc.err); got == nil || got.Code != tc.want || strings.Contains(got.Message, "cannot list") {
			t.Errorf("%s: %+v, want code %s in our words", tc.name, got, tc.want)
		}
	}
	if sourceError(nil) != nil {
		t.Error("sourceError(nil) is not nil")
	}
}
