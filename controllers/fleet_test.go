package controllers_test

import (
	"context"
	"testing"
	"time"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
	"github.com/kubepact/kubepact/test/envtestsuite"
)

// TestFleetFeedRunsWithOperatorRBAC: the live fleet's feed, run as the
// operator's ServiceAccount bound to the generated ClusterRole, lists and
// watches everything it reads — the source is available, not partial
// with a Forbidden resource — and sees the workload a ServiceContract
// binds.
func TestFleetFeedRunsWithOperatorRBAC(t *testing.T) {
	suite.NeedKCM(t) // the Deployment becomes a ReplicaSet and Pods, as in a cluster
	ns := suite.NewNamespace(t)
	createDeployment(t, ns, "web")
	suite.Create(t, envtestsuite.NewContract(ns, "web", "oci://registry.example.com/web:1", "web"))

	ctx, cancel := context.WithCancel(t.Context())
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Debounce: 20 * time.Millisecond})
	feed, err := kube.NewFeed(suite.OperatorConfig, b, &kube.Options{ProbeInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- feed.Start(ctx) }()
	go func() { done <- b.Run(ctx) }()
	defer func() {
		cancel()
		for range 2 {
			if err := <-done; err != nil {
				t.Errorf("fleet stopped with: %v", err)
			}
		}
	}()
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	if err := feed.WaitSynced(wctx); err != nil {
		t.Fatal(err)
	}
	key := fleetgraph.TargetKey(ns, "Deployment", "web")
	deadline := time.Now().Add(30 * time.Second)
	for {
		snap := b.Current()
		res, err := snap.Get(fleetgraph.GetQuery{Target: key})
		if err != nil {
			t.Fatal(err)
		}
		m := snap.Meta()
		available := len(m.Sources) == 1 && m.Sources[0].Status == fleetgraph.SourceAvailable
		if available && res.Found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("as the operator: sources %+v, limitations %+v, target found %v; want available with the target", m.Sources, m.Limitations, res.Found)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
