//go:build !sidecaronly

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/testregistry"
)

// TestMCPRoot serves `kubepact mcp --root REF --root DIR` to a real client
// over stdio: a root pushed to a registry with the registry flags and a
// local one, combined with the authoring tools; the catalog resource lists
// both roots and the lookup finds the pushed one by its full identity.
func TestMCPRoot(t *testing.T) {
	reg := testregistry.New(t, nil)
	payments := filepath.Join(repoRoot(t), "examples", "bundles", "payments")
	ref := "oci://" + reg.Host + "/examples/payments:3.0.2"
	if _, stderr, code := runKubepact(t, "push", payments, ref, "--plain-http"); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	local := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, "mcp", "--root", ref, "--root", local, "--plain-http", "--workspace", t.TempDir())
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	sum := readCatalog(t, cs, stderr, func(s *catalogSummary) bool { return !s.resolving() })
	if len(sum.Roots) != 2 || !sum.Roots[0].Resolved || !sum.Roots[1].Resolved || sum.Roots[0].Revision.Content.Scheme != "oci" || sum.Roots[1].Revision.Content.Scheme != "local" {
		t.Fatalf("roots %+v\n%s", sum.Roots, stderr)
	}
	r := sum.Roots[0].Revision
	call, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_catalog_revision", Arguments: map[string]any{
		"name": r.Service.Name, "domain": r.Service.Domain, "scheme": r.Content.Scheme, "digest": r.Content.Digest}})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := call.StructuredContent.(map[string]any); call.IsError || out["found"] != true || out["catalogId"] != sum.Meta.CatalogID {
		t.Errorf("lookup of the pushed root: %v", call.StructuredContent)
	}
	if _, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_create", Arguments: map[string]any{"name": "x", "dry_run": true}}); err != nil {
		t.Errorf("the authoring tools are served beside the catalog: %v", err)
	}
}

// catalogSummary is what the tests read of pacto://catalog.
type catalogSummary struct {
	Meta struct {
		CatalogID    string `json:"catalogId"`
		Completeness string `json:"completeness"`
		Limitations  []struct {
			Code    string `json:"code"`
			Ref     string `json:"ref"`
			Message string `json:"message"`
		} `json:"limitations"`
	} `json:"meta"`
	Roots []struct {
		Resolved bool `json:"resolved"`
		Revision struct {
			Service struct{ Domain, Name string }   `json:"service"`
			Content struct{ Scheme, Digest string } `json:"content"`
		} `json:"revision"`
		Reason *struct{ Code, Message string } `json:"reason"`
	} `json:"roots"`
}

// resolving reports whether the summary is the placeholder served before
// the first resolution has ended.
func (s *catalogSummary) resolving() bool {
	for _, l := range s.Meta.Limitations {
		if l.Code == "RESOLVING" {
			return true
		}
	}
	return false
}

// readCatalog reads pacto://catalog until done accepts it. The deadline
// only keeps a hung server from hanging the test.
func readCatalog(t *testing.T, cs *sdk.ClientSession, stderr *syncBuffer, done func(*catalogSummary) bool) *catalogSummary {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "pacto://catalog"})
		if err != nil {
			t.Fatalf("read pacto://catalog: %v\n%s", err, stderr)
		}
		sum := &catalogSummary{}
		if err := json.Unmarshal([]byte(res.Contents[0].Text), sum); err != nil {
			t.Fatal(err)
		}
		if done(sum) {
			return sum
		}
		if time.Now().After(deadline) {
			t.Fatalf("pacto://catalog never reached the state wanted: %+v\n%s", sum, stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMCPRootServesWhileRegistryStalls starts `kubepact mcp --root` on
// a registry that accepts and never answers, beside a healthy root, and
// speaks to it over the process's stdio only once the stalled registry
// holds the server's request: initialize completes and pacto://catalog
// answers, partial with a RESOLVING limitation, while that request is
// still unanswered. With --registry-timeout the stalled root then
// ends UNAVAILABLE, named with the timeout, and the healthy one resolves.
func TestMCPRootServesWhileRegistryStalls(t *testing.T) {
	stall := testregistry.NewStall()
	stalled := testregistry.New(t, &testregistry.Options{Wrap: stall.Wrap})
	reg := testregistry.New(t, nil)
	payments := filepath.Join(repoRoot(t), "examples", "bundles", "payments")
	ref := "oci://" + reg.Host + "/examples/payments:3.0.2"
	if _, stderr, code := runKubepact(t, "push", payments, ref, "--plain-http"); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	held := "oci://" + stalled.Host + "/examples/held:1.0.0"
	stderr := &syncBuffer{}
	cmd := exec.CommandContext(t.Context(), kubepactBin, "mcp", "--root", held, "--root", ref, "--plain-http", "--workspace", t.TempDir(),
		"--registry-timeout", "10s")
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	select {
	case <-stall.Asked():
	case <-time.After(time.Minute):
		t.Fatalf("the server never asked the stalled registry\n%s", stderr)
	}

	// Today's main answers initialize only once the whole first
	// resolution has given up on the stalled registry.
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx,
		&sdk.IOTransport{Reader: stdout, Writer: stdin}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("initialize while a registry stalls: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	first := readCatalog(t, cs, stderr, func(*catalogSummary) bool { return true })
	if stall.Held() == 0 {
		t.Fatalf("the stalled registry's request ended before the client was served: %+v", first)
	}
	if !first.resolving() || first.Meta.Completeness != "partial" || len(first.Roots) != 2 || first.Roots[0].Reason == nil || first.Roots[0].Reason.Code != "RESOLVING" {
		t.Errorf("pacto://catalog while the registry stalls: %+v", first)
	}

	done := readCatalog(t, cs, stderr, func(s *catalogSummary) bool { return !s.resolving() })
	if r := done.Roots[0]; r.Resolved || r.Reason == nil || r.Reason.Code != "UNAVAILABLE" || !strings.Contains(r.Reason.Message, "did not answer within 10s") {
		t.Errorf("stalled root after the timeout: %+v", r)
	}
	if !done.Roots[1].Resolved {
		t.Errorf("healthy root: %+v", done.Roots[1])
	}
	named := false
	for _, l := range done.Meta.Limitations {
		named = named || (l.Ref == held && strings.Contains(l.Message, "did not answer within 10s"))
		if l.Code == "CANCELLED" {
			t.Errorf("the stalled root cancelled the rest: %+v", l)
		}
	}
	if !named {
		t.Errorf("no limitation names the stalled root and the timeout: %+v", done.Meta.Limitations)
	}
	// The log line is written after the answer the catalog serves, by the
	// resolving goroutine: wait for it rather than read it at once.
	logged := false
	for deadline := time.Now().Add(10 * time.Second); !logged && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		logged = strings.Contains(stderr.String(), "Catalog resolved")
	}
	if !logged {
		t.Errorf("stderr does not log the first resolution:\n%s", stderr)
	}
}

// TestMCPRootRefused: an empty --root, or a bound above its ceiling, stops
// start-up with the flag named.
func TestMCPRootRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--root", ""}, "--root[0] is empty"},
		{[]string{"--root", ".", "--catalog-max-depth", "30"}, "--catalog-max-depth is 30: the ceiling is 25"},
		{[]string{"--families", "catalog"}, "the catalog family needs --root"},
	} {
		_, stderr, code := runKubepact(t, append([]string{"mcp", "--workspace", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
