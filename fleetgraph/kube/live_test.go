package kube_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/test/testregistry"
)

// pushBundle writes a bundle of service name at version (extra appended to
// its pacto.yaml), pushes it to host/org/name:version and returns the
// digest.
func pushBundle(t *testing.T, c *oci.Client, host, name, version, extra string) digest.Digest {
	t.Helper()
	dir := t.TempDir()
	doc := "pactoVersion: \"2.0\"\nservice:\n  name: " + name + "\n  version: " + version + "\n  owner:\n    team: team-" + name + "\n" + extra
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := oci.ParseReference(host + "/org/" + name + ":" + version)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Push(t.Context(), ref, img)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func create(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := admin.Create(t.Context(), o); err != nil {
			t.Fatalf("create %T %s: %v", o, o.GetName(), err)
		}
	}
}

// edit reads obj as the API server holds it, applies change and writes it
// back, again on a conflict with another writer.
func edit(t *testing.T, obj client.Object, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := admin.Get(t.Context(), client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return admin.Update(t.Context(), obj)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, o := range objs {
		if err := admin.Delete(t.Context(), o); err != nil {
			t.Fatalf("delete %T %s: %v", o, o.GetName(), err)
		}
	}
}

func namespace(t *testing.T, name string) {
	t.Helper()
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

func deployment(ns, name, image string, replicas int32, annotations map[string]string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}}}
}

func statefulSet(ns, name, image string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}}}
}

func daemonSet(ns, name, image string, annotations map[string]string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}}}}}
}

func service(ns, name string, port int32) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: port}}}}
}

// contract creates a ServiceContract and writes the status the reconciler
// would: the bundle at host/org/name:version pinned to d, its summary, and
// Ready (or the failing condition given).
func contract(t *testing.T, ns, name, host, version string, d digest.Digest, kind, target, svc string, failing ...string) *v1alpha1.ServiceContract {
	t.Helper()
	sc := &v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{OCI: "oci://" + host + "/org/" + name + ":" + version},
			TargetRef: v1alpha1.TargetReference{Kind: kind, Name: target}}}
	if svc != "" {
		sc.Spec.ServiceRef = &v1alpha1.LocalObjectReference{Name: svc}
	}
	create(t, sc)
	setStatus(t, sc, host, name, version, d, failing...)
	return sc
}

func setStatus(t *testing.T, sc *v1alpha1.ServiceContract, host, service, version string, d digest.Digest, failing ...string) {
	t.Helper()
	if err := admin.Get(t.Context(), client.ObjectKeyFromObject(sc), sc); err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	cond := func(typ string, s metav1.ConditionStatus) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Reason: v1alpha1.ReasonSucceeded, Message: "m", LastTransitionTime: now, ObservedGeneration: sc.Generation}
	}
	sc.Status = v1alpha1.ServiceContractStatus{ObservedGeneration: sc.Generation, Digest: string(d),
		ResolvedRef:    host + "/org/" + service + ":" + version + "@" + string(d),
		Contract:       &v1alpha1.ContractSummary{Service: service, Version: version, Owner: "team-" + service},
		LastResolvedAt: &now,
		Conditions:     []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionTrue)}}
	for _, f := range failing {
		sc.Status.Conditions = []metav1.Condition{cond(v1alpha1.ConditionReady, metav1.ConditionFalse), cond(f, metav1.ConditionFalse)}
	}
	if err := admin.Status().Update(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
}

func pactoCR(t *testing.T, ns, name string, status map[string]any) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "pacto.trianalab.io/v1alpha1", "kind": "Pacto",
		"metadata": map[string]any{"namespace": ns, "name": name}, "spec": map[string]any{"contractRef": map[string]any{"oci": "ghcr.io/acme/" + name}}}}
	create(t, u)
	if status != nil {
		u.Object["status"] = status
		if err := admin.Status().Update(t.Context(), u); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// target answers pacto_fleet_get for a target key on the current
// snapshot; nil when it is not there.
func (l *live) target(t *testing.T, key string) map[string]any {
	t.Helper()
	res := l.fresh(t, "pacto_fleet_get", map[string]any{"target": key})
	tv, _ := res["target"].(map[string]any)
	return tv
}

// TestLiveFleetOverMCP: create, update and delete of every watched kind —
// ServiceContract, Deployment, StatefulSet, DaemonSet, Service and Pacto CR
// — is in the next snapshot as an MCP client over HTTP sees it; a session
// pinned before the changes keeps its snapshot and is told a newer one
// exists; a dependency naming the OCI ref of a service in the cluster
// resolves to that service's ServiceContract.
func TestLiveFleetOverMCP(t *testing.T) {
	needControlPlane(t)
	reg := testregistry.New(t, nil).Host
	oc, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`), CacheDir: t.TempDir(), AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	ledgerDigest := pushBundle(t, oc, reg, "ledger", "1.0.0", "")
	paymentsDigest := pushBundle(t, oc, reg, "payments", "1.0.0",
		"dependencies:\n  - name: books\n    ref: oci://"+reg+"/org/ledger:1.0.0\n    required: true\n    compatibility: ^1.0.0\n")

	const ns = "shop"
	namespace(t, ns)
	l := startLive(t, adminCfg, &kube.Options{Namespaces: []string{ns}, ProbeInterval: time.Second,
		Bundles: source.NewRefLoader(&source.RefLoaderOptions{Client: oc})})

	// Create: one object of every kind.
	dep := deployment(ns, "payments", "r.example/payments:1", 2, nil)
	sts := statefulSet(ns, "ledger", "r.example/ledger:1", 1)
	ds := daemonSet(ns, "agent", "r.example/agent:1", map[string]string{kube.AnnotationServiceContract: "ledger"})
	svc := service(ns, "payments", 80)
	create(t, dep, sts, ds, svc)
	payments := contract(t, ns, "payments", reg, "1.0.0", paymentsDigest, "Deployment", "payments", "payments")
	ledger := contract(t, ns, "ledger", reg, "1.0.0", ledgerDigest, "StatefulSet", "ledger", "")
	legacy := pactoCR(t, ns, "legacy", map[string]any{"contractStatus": "NonCompliant",
		"contract": map[string]any{"serviceName": "orders"}, "evaluationCoverage": map[string]any{"evaluated": 1, "required": 2}})
	old := pactoCR(t, ns, "old", map[string]any{"contractStatus": "Compliant", "summary": map[string]any{"total": 3, "passed": 3, "failed": 0}})

	depKey := fleetgraph.TargetKey(ns, "Deployment", "payments")
	stsKey := fleetgraph.TargetKey(ns, "StatefulSet", "ledger")
	dsKey := fleetgraph.TargetKey(ns, "DaemonSet", "agent")
	legacyKey := fleetgraph.TargetKey(ns, kube.KindPacto, "legacy")
	oldKey := fleetgraph.TargetKey(ns, kube.KindPacto, "old")
	l.eventually(t, "every kind created", func() (bool, string) {
		get := l.fresh(t, "pacto_fleet_get", map[string]any{"service": "payments"})
		s := jsonOf(get)
		deps, _ := get["dependencies"].([]any)
		resolved := len(deps) == 1 && deps[0].(map[string]any)["resolved"] == true && deps[0].(map[string]any)["toService"] == fleetgraph.ServiceKey(reg+"/org", "ledger")
		ok := resolved && strings.Contains(s, `r.example/payments:1`) && strings.Contains(s, `"service":{"exists":true,"name":"payments"`) &&
			l.target(t, stsKey) != nil && l.target(t, dsKey) != nil && l.target(t, legacyKey) != nil && l.target(t, oldKey) != nil
		return ok, s
	})
	if tv := l.target(t, legacyKey); tv["service"] != "orders" || tv["compliance"] != "NonCompliant" || jsonOf(tv["coverage"]) != `{"evaluated":1,"required":2}` {
		t.Errorf("Pacto CR (monorepo status) read as %s", jsonOf(tv))
	}
	if tv := l.target(t, oldKey); tv["service"] != "old" || tv["compliance"] != "Compliant" || jsonOf(tv["coverage"]) != `{"evaluated":3,"required":3}` {
		t.Errorf("Pacto CR (standalone status) read as %s", jsonOf(tv))
	}
	if tv := l.target(t, dsKey); tv["service"] != "ledger" || tv["revisionMatch"] != "exact" {
		t.Errorf("annotated DaemonSet read as %s; want service ledger, linked exactly", jsonOf(tv))
	}

	// A session pinned now keeps this snapshot through every change below.
	pinned := l.session(t)
	before := call(t, pinned, "pacto_fleet_search", map[string]any{})
	pinnedID := before["pin"].(map[string]any)["snapshotId"]

	// Update: one change of every kind.
	// The controller manager writes the workloads' status meanwhile: each
	// change is made on the object as it is now.
	edit(t, dep, func() { dep.Spec.Template.Spec.Containers[0].Image = "r.example/payments:2" })
	edit(t, sts, func() { sts.Spec.Replicas = ptr(int32(3)) })
	edit(t, ds, func() { ds.Spec.Template.Spec.Containers[0].Image = "r.example/agent:2" })
	edit(t, svc, func() { svc.Spec.Ports[0].Port = 8080 })
	setStatus(t, payments, reg, "payments", "1.0.0", paymentsDigest, v1alpha1.ConditionContractValid)
	legacy.Object["status"].(map[string]any)["contractStatus"] = "Compliant"
	if err := admin.Status().Update(t.Context(), legacy); err != nil {
		t.Fatal(err)
	}
	l.eventually(t, "every kind updated", func() (bool, string) {
		d, s, a, p := l.target(t, depKey), l.target(t, stsKey), l.target(t, dsKey), l.target(t, legacyKey)
		got := jsonOf([]any{d, s, a, p})
		ok := d != nil && strings.Contains(jsonOf(d), "r.example/payments:2") && strings.Contains(jsonOf(d), `http:8080/TCP`) && d["compliance"] == "Invalid" &&
			s != nil && strings.Contains(jsonOf(s), `"desired":3`) && a != nil && strings.Contains(jsonOf(a), "r.example/agent:2") &&
			p != nil && p["compliance"] == "Compliant"
		return ok, got
	})
	again := call(t, pinned, "pacto_fleet_get", map[string]any{"target": depKey})
	pin := again["pin"].(map[string]any)
	if pin["snapshotId"] != pinnedID || pin["newerAvailable"] != true || pin["by"] != "session" {
		t.Errorf("pinned session after the changes: pin %v; want snapshot %v, by session, newerAvailable", pin, pinnedID)
	}
	if s := jsonOf(again["target"]); !strings.Contains(s, "r.example/payments:1") || !strings.Contains(s, `"compliance":"Compliant"`) {
		t.Errorf("pinned session answered from a newer snapshot: %s", s)
	}

	// Delete: one object of every kind.
	remove(t, ds, svc, sts, old, ledger)
	l.eventually(t, "every kind deleted", func() (bool, string) {
		d, s := l.target(t, depKey), l.target(t, stsKey)
		get := l.fresh(t, "pacto_fleet_get", map[string]any{"service": "payments"})
		deps, _ := get["dependencies"].([]any)
		ok := l.target(t, dsKey) == nil && l.target(t, oldKey) == nil && s == nil && // the StatefulSet's contract is gone too
			d != nil && strings.Contains(jsonOf(d), `"service":{"exists":false,"name":"payments"}`) &&
			len(deps) == 1 && deps[0].(map[string]any)["resolved"] == false
		return ok, jsonOf([]any{d, s, deps})
	})
	ledgerGet := l.fresh(t, "pacto_fleet_get", map[string]any{"service": "ledger"})
	if ledgerGet["found"] != false {
		t.Errorf("ledger after its ServiceContract was deleted: %s", jsonOf(ledgerGet))
	}
	remove(t, dep, payments, legacy)
	l.eventually(t, "the fleet emptied", func() (bool, string) {
		res := l.fresh(t, "pacto_fleet_search", map[string]any{})
		return res["total"] == float64(0) && res["meta"].(map[string]any)["completeness"] == fleetgraph.CompletenessEmpty, jsonOf(res)
	})
}

func ptr[T any](v T) *T { return &v }
