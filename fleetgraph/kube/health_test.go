package kube_test

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
)

// TestQueryPathMakesNoAPICalls: 1,000 fleet queries over MCP (search, get,
// status, graph and explain, on sessions and statelessly) send the API
// server no request: the count through the feed's own transport is the
// same before and after.
func TestQueryPathMakesNoAPICalls(t *testing.T) {
	needControlPlane(t)
	const ns = "quiet"
	namespace(t, ns)
	create(t, deployment(ns, "web", "r.example/web:1", 1, nil), service(ns, "web", 80))
	contractNoBundle(t, ns, "web", "Deployment", "web")
	var requests atomic.Int64
	// Probes would be API calls too, but not on the query path: an hour
	// apart, none falls inside the measurement.
	l := startLive(t, countingConfig(&requests), &kube.Options{Namespaces: []string{ns}, ProbeInterval: time.Hour})
	key := fleetgraph.TargetKey(ns, "Deployment", "web")
	l.eventually(t, "the target", func() (bool, string) { tv := l.target(t, key); return tv != nil, jsonOf(tv) })

	before := requests.Load()
	cs := l.session(t)
	queries := []struct {
		tool string
		args map[string]any
	}{
		{"pacto_fleet_search", map[string]any{}},
		{"pacto_fleet_get", map[string]any{"target": key}},
		{"pacto_fleet_get", map[string]any{"service": "web"}},
		{"pacto_fleet_status", map[string]any{}},
		{"pacto_fleet_graph", map[string]any{"service": "web"}},
		{"pacto_fleet_explain", map[string]any{"subject": "web"}},
	}
	for i := range 1000 {
		q := queries[i%len(queries)]
		call(t, cs, q.tool, q.args)
	}
	if after := requests.Load(); after != before {
		t.Errorf("1,000 fleet queries sent %d requests to the API server; want none", after-before)
	}
	if before == 0 {
		t.Error("the counting transport saw no request at all: it does not wrap the feed's client")
	}
}

// contractNoBundle creates a Ready ServiceContract whose status names a
// digest without a registry behind it (the feed is given no bundle loader).
func contractNoBundle(t *testing.T, ns, name, kind, target string) {
	t.Helper()
	const d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	contract(t, ns, name, "registry.example", "1.0.0", d, kind, target, "")
}

// stopAPIServer stops the API server (killing it when it does not stop
// within its StopTimeout, which is a crash to the feed) and waits until
// its port is free again.
func stopAPIServer(t *testing.T) {
	t.Helper()
	as := env.ControlPlane.APIServer
	if err := as.Stop(); err != nil {
		t.Logf("API server stop: %v (killed)", err)
	}
	addr := net.JoinHostPort(as.Address, as.Port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the API server still listens on %s", addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAPIServerRestart: with the API server stopped mid-run the fleet goes
// partial, with a limitation naming a watched resource and the records
// kept; restarted on the same port and etcd, the fleet is complete again
// and sees changes made meanwhile, without restarting the feed.
func TestAPIServerRestart(t *testing.T) {
	needControlPlane(t)
	const ns = "restart"
	namespace(t, ns)
	create(t, deployment(ns, "web", "r.example/web:1", 1, nil))
	contractNoBundle(t, ns, "web", "Deployment", "web")
	l := startLive(t, adminCfg, &kube.Options{Namespaces: []string{ns}, ProbeInterval: 200 * time.Millisecond})
	key := fleetgraph.TargetKey(ns, "Deployment", "web")
	meta := func() map[string]any {
		return l.fresh(t, "pacto_fleet_get", map[string]any{"target": key})["meta"].(map[string]any)
	}
	l.eventually(t, "complete with the target", func() (bool, string) {
		m := meta()
		return m["completeness"] == fleetgraph.CompletenessComplete && l.target(t, key) != nil, jsonOf(m)
	})

	stopAPIServer(t)
	restarted := false
	defer func() {
		if !restarted { // leave the control plane usable for the other tests
			_ = env.ControlPlane.APIServer.Start()
		}
	}()
	l.eventually(t, "partial, naming a resource", func() (bool, string) {
		m := meta()
		s := jsonOf(m["limitations"])
		return m["completeness"] == fleetgraph.CompletenessPartial && strings.Contains(s, "deployments.apps") && strings.Contains(s, "kept as last seen"), jsonOf(m)
	})
	if l.target(t, key) == nil {
		t.Error("the target was dropped while the API server was down; its records must be kept")
	}

	if err := env.ControlPlane.APIServer.Start(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	create(t, deployment(ns, "late", "r.example/late:1", 1, nil))
	contractNoBundle(t, ns, "late", "Deployment", "late")
	lateKey := fleetgraph.TargetKey(ns, "Deployment", "late")
	l.eventually(t, "complete again, with the change made after the restart", func() (bool, string) {
		m := meta()
		return m["completeness"] == fleetgraph.CompletenessComplete && !strings.Contains(jsonOf(m["limitations"]), "could not be watched") && l.target(t, lateKey) != nil, jsonOf(m)
	})
}
