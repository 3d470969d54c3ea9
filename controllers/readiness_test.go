package controllers_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kubepact/kubepact/controllers"
)

// TestInformersSynced: the operator's /readyz check says not ready, naming
// each informer, until every informer the controller reads has synced, and
// ready once they have.
func TestInformersSynced(t *testing.T) {
	suite.NeedControlPlane(t)
	c, err := cache.New(suite.OperatorConfig, cache.Options{Scheme: suite.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	check := controllers.InformersSynced(c)
	req := httptest.NewRequestWithContext(t.Context(), "GET", "/readyz/informers", nil)
	err = check(req)
	if err == nil || !strings.Contains(err.Error(), "ServiceContract has not synced") || !strings.Contains(err.Error(), "Deployment has not synced") {
		t.Fatalf("before the cache started: %v; want not ready, naming each informer", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cache: %v", err)
		}
	}()
	deadline := time.Now().Add(60 * time.Second) // bounds a hung cache; measures nothing
	for {
		err := check(req)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache started 60s ago, still not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
