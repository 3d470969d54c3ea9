package mcp

import (
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/largeapi"
)

// githubCapabilityBundle projects GitHub's spec under mode, writes allowed.
func githubCapabilityBundle(tb testing.TB, mode string) *CapabilityBundle {
	tb.Helper()
	dir := largeapi.GitHubBundleDir(tb)
	b, err := bundle.LoadDir(dir, &bundle.LoadOptions{Limits: archive.Limits{MaxFileBytes: 32 << 20, MaxTotalBytes: 64 << 20}})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := openapitools.Project(tb.Context(), b, &openapitools.Options{AllowWrites: true, ToolMode: mode, MaxSpecBytes: 32 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	return &CapabilityBundle{Bundle: b, Capability: c}
}

// BenchmarkGitHubServer assembles a server for GitHub's projected spec in
// both modes, side by side: what follows projection before initialize
// (the search index is built once per Capability, so only the first
// iteration of discover pays it; BenchmarkGitHubIndex in
// internal/openapitools measures it).
func BenchmarkGitHubServer(b *testing.B) {
	for _, mode := range []string{openapitools.ToolModeAll, openapitools.ToolModeDiscover} {
		b.Run(mode, func(b *testing.B) {
			cb := githubCapabilityBundle(b, mode)
			b.ReportAllocs()
			for b.Loop() {
				s, err := NewServer(b.Context(), &Options{Families: []Family{FamilyCapability}, Capability: cb})
				if err != nil {
					b.Fatal(err)
				}
				_ = s.Close()
			}
		})
	}
}

// BenchmarkGitHubSearchCall is one pacto_search_operations call over the
// in-memory transport on GitHub's spec, the index built; p50-µs is the
// median call.
func BenchmarkGitHubSearchCall(b *testing.B) {
	cb := githubCapabilityBundle(b, openapitools.ToolModeDiscover)
	s, err := NewServer(b.Context(), &Options{Families: []Family{FamilyCapability}, Capability: cb})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	cs := connect(b.Context(), b, s)
	queries := []string{"list the open pull requests of a repository", "create an issue", "download the logs of a job", "star a repository"}
	var took []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: toolSearchOperations, Arguments: map[string]any{"query": queries[i%len(queries)]}})
		took = append(took, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("search: %v %v", err, res)
		}
		i++
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
}
