package kubeauth_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/mcp/kubeauth"
)

// BenchmarkScopedMCPQuery compares a fleet tool call over HTTP (the go-sdk
// client, stateless era) on a server without identity filtering (a static
// token) with the same call on a server that authenticates the caller's
// ServiceAccount token with TokenReview and scopes it with
// SubjectAccessReview (warm caches: no API call per query), over one fleet
// of 2,000 services and 6,000 targets in 20 namespaces; the caller may list
// ServiceContracts in 5 of them.
//
//	KUBEBUILDER_ASSETS=… go test ./mcp/kubeauth -run '^$' -bench ScopedMCPQuery -benchmem
func BenchmarkScopedMCPQuery(b *testing.B) {
	suite.NeedControlPlane(b)
	const services, targets, namespaces = 2000, 6000, 20
	var nss []string
	for range namespaces {
		nss = append(nss, suite.NewNamespace(b))
	}
	bld := fleetgraph.NewBuilder(nil)
	for i := range services {
		r := &fleetgraph.Revision{Name: fmt.Sprintf("svc-%04d", i), Version: "1.0.0", Digest: fmt.Sprintf("sha256:%064d", i),
			Scopes: []string{nss[i%namespaces]}, Source: "kube", Owner: fmt.Sprintf("team-%d", i%30),
			Edges: []fleetgraph.Edge{{Type: fleetgraph.EdgeDependency, Name: fmt.Sprintf("svc-%04d", (i*7+1)%services), Ref: fmt.Sprintf("svc-%04d:1.0.0", (i*7+1)%services)}}}
		if err := bld.UpsertRevision(r); err != nil {
			b.Fatal(err)
		}
	}
	for i := range targets {
		s := i % services
		if err := bld.UpsertTarget(&fleetgraph.Target{Scope: nss[s%namespaces], Kind: "Deployment", Name: fmt.Sprintf("svc-%04d-%d", s, i),
			Service: fmt.Sprintf("svc-%04d", s), Digest: fmt.Sprintf("sha256:%064d", s), Compliance: fleetgraph.Statuses()[i%5], Source: "kube"}); err != nil {
			b.Fatal(err)
		}
	}
	bld.SetSource(fleetgraph.SourceState{ID: "kube", Kind: "kubernetes", Status: fleetgraph.SourceAvailable})
	bld.Flush()

	saNS := nss[0]
	tok := serviceAccountToken(b, saNS, "reader")
	for _, ns := range nss[:5] {
		grantList(b, ns, saNS, "reader")
	}
	ident, err := kubeauth.NewKubeIdentity(suite.OperatorConfig, nil)
	if err != nil {
		b.Fatal(err)
	}
	tokenFile := filepath.Join(b.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("static-secret"), 0o600); err != nil {
		b.Fatal(err)
	}
	base := mcp.Options{Transport: mcp.TransportHTTP, Workspace: b.TempDir(), Families: []mcp.Family{mcp.FamilyFleet}, Fleet: mcp.FleetOptions{Enabled: true, Builder: bld}}
	plain, scoped := base, base
	plain.AuthTokenFile = tokenFile
	scoped.Authenticator, scoped.Scoper = ident, ident
	clients := map[string]*sdk.ClientSession{
		"unfiltered":   mcpClient(b, serveMCP(b, &plain), "static-secret", "2026-07-28"),
		"scoped-5of20": mcpClient(b, serveMCP(b, &scoped), tok, "2026-07-28"),
	}
	for _, q := range []struct {
		name string
		args map[string]any
		tool string
	}{
		{"search", map[string]any{"limit": 50}, "pacto_fleet_search"},
		{"get", map[string]any{"service": "svc-0020"}, "pacto_fleet_get"},
		{"status", map[string]any{"limit": 50}, "pacto_fleet_status"},
	} {
		for _, mode := range []string{"unfiltered", "scoped-5of20"} {
			b.Run(q.name+"/"+mode, func(b *testing.B) {
				cs := clients[mode]
				got := call(b, cs, q.tool, q.args) // warm: token, access decisions, the view
				if q.tool == "pacto_fleet_search" {
					want := float64(services)
					if mode != "unfiltered" {
						want = services / 4
					}
					if got["total"] != want {
						b.Fatalf("%s sees %v services, want %v", mode, got["total"], want)
					}
				}
				b.ReportAllocs()
				for b.Loop() {
					call(b, cs, q.tool, q.args)
				}
			})
		}
	}
}
