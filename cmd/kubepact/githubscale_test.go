//go:build !sidecaronly

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/largeapi"
)

// Environment of TestGitHubScale.
const (
	// envScaleBaseline names a second kubepact binary (e.g. one built from
	// main) to measure in the same run, beside the one under test.
	envScaleBaseline = "KUBEPACT_SCALE_BASELINE"
	// envScaleArgs holds extra flags for both shapes, space-separated
	// (e.g. a tool mode).
	envScaleArgs = "KUBEPACT_SCALE_ARGS"
)

// scaleFigures is what one served process measured.
type scaleFigures struct {
	initialize, initCPU  time.Duration
	tools, listBytes     int
	firstSearch          time.Duration // discover mode: the first pacto_search_operations
	firstCall, otherCall time.Duration
	secondCall           time.Duration
	firstCallCPU         time.Duration
	peak, steady         int64
}

func (f scaleFigures) String() string {
	search := ""
	if f.firstSearch > 0 {
		search = fmt.Sprintf("first search %v; ", f.firstSearch.Round(100*time.Microsecond))
	}
	return fmt.Sprintf("initialize %v (CPU %v); %d tools, tools/list %d bytes; %sfirst call %v (CPU %v), same operation again %v, first call of another operation %v; peak RSS %.0f MiB, steady RSS %.0f MiB",
		f.initialize.Round(time.Millisecond), f.initCPU.Round(10*time.Millisecond), f.tools, f.listBytes, search,
		f.firstCall.Round(100*time.Microsecond), f.firstCallCPU.Round(10*time.Millisecond), f.secondCall.Round(100*time.Microsecond), f.otherCall.Round(100*time.Microsecond),
		float64(f.peak)/(1<<20), float64(f.steady)/(1<<20))
}

// TestGitHubScale serves GitHub's REST API description (npm
// @octokit/openapi, `make github-spec`) with `kubepact mcp` (stdio) and
// `kubepact sidecar` (Streamable HTTP), every operation exposed
// (--allow-writes), each with its default memory settings, in both tool
// modes: all (a tool per operation, called by name) and discover (the
// operations found with pacto_search_operations and called through
// pacto_call_read). It reports what a user feels: start → initialize
// answered, tools/list size, in discover mode the first search (which
// builds the index), the first call of an operation (and a second, and
// another operation's first), peak and steady resident memory. With
// KUBEPACT_SCALE_BASELINE naming another binary, that one is measured in
// the same run, beside it; KUBEPACT_SCALE_ARGS adds flags to every
// process (one that sets --tool-mode measures that mode only). It asserts
// only correctness (every process's calls reach the service and
// succeed), never a time or a size: run it with -v to read the figures.
func TestGitHubScale(t *testing.T) {
	if testing.Short() {
		t.Skip("serves a 13 MB API")
	}
	dir := largeapi.GitHubBundleDir(t)
	var hits atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(upstream.Close)
	bins := []struct{ label, path string }{{"this tree", kubepactBin}}
	if b := os.Getenv(envScaleBaseline); b != "" {
		bins = append([]struct{ label, path string }{{"baseline " + b, b}}, bins...)
	}
	extra := strings.Fields(os.Getenv(envScaleArgs))
	modes := []string{openapitools.ToolModeAll, openapitools.ToolModeDiscover}
	if slices.ContainsFunc(extra, func(a string) bool { return strings.HasPrefix(a, "--tool-mode") }) {
		modes = []string{"as " + envScaleArgs + " says"}
	}
	for _, mode := range modes {
		args := extra
		if !strings.HasPrefix(mode, "as ") {
			args = append([]string{"--tool-mode", mode}, extra...)
		}
		for _, shape := range []string{"mcp", "sidecar"} {
			for _, bin := range bins {
				t.Run(shape+"/"+strings.Fields(mode)[0]+"/"+filepath.Base(bin.path), func(t *testing.T) {
					before := hits.Load()
					f := measureGitHub(t, bin.path, shape, dir, upstream.URL, args)
					t.Logf("%s, %s mode, %s: %s", shape, mode, bin.label, f)
					if hits.Load() == before {
						t.Error("no call reached the service")
					}
				})
			}
		}
	}
}

// measureGitHub starts one process of shape serving dir and measures it.
func measureGitHub(t *testing.T, bin, shape, dir, upstream string, extra []string) scaleFigures {
	t.Helper()
	var f scaleFigures
	common := append([]string{"--allow-writes", "--max-file-bytes", strconv.Itoa(16 << 20)}, extra...)
	stderr := &syncBuffer{}
	var cmd *exec.Cmd
	var transport sdk.Transport
	start := time.Now()
	switch shape {
	case "mcp":
		cmd = exec.Command(bin, append([]string{"mcp", dir, "--base-url", upstream, "--workspace", t.TempDir()}, common...)...)
		transport = &sdk.CommandTransport{Command: cmd}
	case "sidecar":
		port, hport := freeport.Port(t), freeport.Port(t)
		cmd = exec.Command(bin, append([]string{"sidecar", "--bundle", dir, "--upstream", upstream,
			"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:" + strconv.Itoa(hport)}, common...)...)
		transport = &sdk.StreamableClientTransport{Endpoint: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), DisableStandaloneSSE: true, MaxRetries: -1}
	}
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cmd.Stderr = stderr
	if shape == "sidecar" {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "github-scale", Version: "v0"}, nil)
	var cs *sdk.ClientSession
	for {
		var err error
		if cs, err = client.Connect(t.Context(), transport, nil); err == nil {
			break
		}
		if shape == "mcp" || time.Since(start) > 60*time.Second {
			t.Fatalf("connect: %v\n%s", err, stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.initialize = time.Since(start)
	t.Cleanup(func() { _ = cs.Close() })
	pid := cmd.Process.Pid
	f.initCPU = cpuTime(t, pid)

	descs := map[string]string{} // "METHOD /path" → tool name
	discover := false
	cursor := ""
	for {
		res, err := cs.ListTools(t.Context(), &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		raw, _ := json.Marshal(res)
		f.listBytes += len(raw)
		f.tools += len(res.Tools)
		for _, tl := range res.Tools {
			discover = discover || tl.Name == "pacto_call_read"
			if i := strings.LastIndex(tl.Description, "\n\n"); i >= 0 {
				descs[tl.Description[i+2:]] = tl.Name
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	// do calls one tool and fails the test on a refusal.
	do := func(name string, args map[string]any) time.Duration {
		begin := time.Now()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
		took := time.Since(begin)
		if err != nil || res.IsError {
			var text string
			if res != nil && len(res.Content) > 0 {
				text = res.Content[0].(*sdk.TextContent).Text
			}
			t.Errorf("%s %v: %v %s", name, args, err, text)
		}
		return took
	}
	// find names the operation of route: the tool listing it, or in
	// discover mode the search hit (a search for query) with its method
	// and path.
	find := func(route, query string) string {
		if name, ok := descs[route]; ok || !discover {
			if !ok {
				t.Errorf("no tool lists %s", route)
			}
			return name
		}
		begin := time.Now()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_search_operations", Arguments: map[string]any{"query": query, "limit": 50}})
		if f.firstSearch == 0 {
			f.firstSearch = time.Since(begin)
		}
		if err != nil || res.IsError {
			t.Fatalf("pacto_search_operations %q: %v %v", query, err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var found struct {
			Operations []struct{ Name, Method, Path string }
		}
		if err := json.Unmarshal(raw, &found); err != nil {
			t.Fatal(err)
		}
		for _, op := range found.Operations {
			if op.Method+" "+op.Path == route {
				return op.Name
			}
		}
		t.Fatalf("pacto_search_operations %q does not find %s in its first 50 hits: %s", query, route, raw)
		return ""
	}
	call := func(name string, args map[string]any) time.Duration {
		if !discover {
			return do(name, args)
		}
		return do("pacto_call_read", map[string]any{"operation": name, "arguments": args})
	}
	repo := find("GET /repos/{owner}/{repo}", "get a repository")
	pulls := find("GET /repos/{owner}/{repo}/pulls", "list pull requests")
	before := cpuTime(t, pid)
	f.firstCall = call(repo, map[string]any{"owner": "octo", "repo": "hello"})
	f.firstCallCPU = cpuTime(t, pid) - before
	f.secondCall = call(repo, map[string]any{"owner": "octo", "repo": "world"})
	f.otherCall = call(pulls, map[string]any{"owner": "octo", "repo": "hello", "state": "open"})
	f.peak = vmHWM(t, pid)
	time.Sleep(3 * time.Second) // let the runtime return what it freed
	f.steady = vmRSS(t, pid)
	return f
}
