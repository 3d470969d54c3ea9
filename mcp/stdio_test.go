package mcp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/gobuild"
)

// binDir holds the kubepact binary built for the process tests; TestMain
// removes it.
var (
	binDir    string
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "kubepact-mcp-test-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	// Processes and in-process servers of these tests cache under the
	// test's directory, never under the user's cache directory.
	if err := os.Setenv("KUBEPACT_CACHE_DIR", filepath.Join(dir, "cache")); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kubepactBinary builds ./cmd/kubepact once per test binary, on first use,
// so runs that skip the process tests do not pay for the build.
func kubepactBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the kubepact binary")
	}
	buildOnce.Do(func() {
		binPath = filepath.Join(binDir, "kubepact")
		cmd := gobuild.Command("", binPath, "../cmd/kubepact")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = err
			binPath = out.String()
		}
	})
	if buildErr != nil {
		t.Fatalf("go build ./cmd/kubepact: %v\n%s", buildErr, binPath)
	}
	return binPath
}

// syncBuffer is a bytes.Buffer safe for the process's stderr copier and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStdioSubprocess drives the built binary over stdio with the go-sdk
// client, in both protocol eras: stdout carries only JSON-RPC, and the
// audit log goes to stderr.
func TestStdioSubprocess(t *testing.T) {
	bin := kubepactBinary(t)
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			ws := t.TempDir()
			stderr := &syncBuffer{}
			cmd := exec.CommandContext(t.Context(), bin, "mcp", "--workspace", ws)
			cmd.Stderr = stderr
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).
				Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("Connect: %v\nstderr:\n%s", err, stderr)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %q, want %q", got, version)
			}

			res := call(t, cs, "pacto_create", map[string]any{"name": "billing", "interfaces": `[{"name":"api","type":"openapi"}]`})
			if res.IsError {
				t.Fatalf("pacto_create: %s", text(res))
			}
			if _, err := os.Stat(filepath.Join(ws, "billing", "pacto.yaml")); err != nil {
				t.Errorf("pacto.yaml not written below the workspace: %v", err)
			}
			res = call(t, cs, "pacto_server_info", map[string]any{})
			if got := structured(t, res)["workspace"]; got != ws {
				t.Errorf("workspace = %v, want %v", got, ws)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			log := stderr.String()
			for _, want := range []string{"Tool call", "pacto_create", "pacto_server_info"} {
				if !strings.Contains(log, want) {
					t.Errorf("stderr lacks %q:\n%s", want, log)
				}
			}
			if strings.Contains(log, "billing") {
				t.Errorf("stderr leaks an argument value:\n%s", log)
			}
		})
	}
}
