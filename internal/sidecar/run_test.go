package sidecar_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/sidecar"
	"github.com/kubepact/kubepact/mcp"
)

// TestRunSaysWhereItFailed: each failure before ready is a StartError
// naming its stage (and, for a busy address, the address), so that the
// command can say it in its flags; a refused configuration reaches no
// loader, a packed bundle of another digest is never projected, and the
// probes' port is given back when the start fails.
func TestRunSaysWhereItFailed(t *testing.T) {
	b, err := bundle.LoadDir(filepath.Join("..", "..", "examples", "bundles", "catalog"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "examples", "bundles", "catalog")
	// A regular file is loaded as a packed bundle (LoadFile).
	packed := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(packed, []byte("packed"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	free := func() string {
		ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	base := func() sidecar.Config {
		c := sidecar.DefaultConfig()
		c.Bundle, c.Upstream, c.HealthAddr = dir, "http://127.0.0.1:8080", free()
		return c
	}
	for _, tc := range []struct {
		name      string
		cfg       func() sidecar.Config
		loadErr   error
		stage     sidecar.Stage
		addr      func(sidecar.Config) string
		projected bool
		is        error
	}{
		{name: "no bundle", cfg: func() sidecar.Config { c := base(); c.Bundle = ""; return c }, stage: sidecar.StageConfig},
		{name: "remote upstream", cfg: func() sidecar.Config { c := base(); c.Upstream = "http://example.com"; return c }, stage: sidecar.StageConfig},
		{name: "busy probes", cfg: func() sidecar.Config { c := base(); c.HealthAddr = busy.Addr().String(); return c },
			stage: sidecar.StageHealth, addr: func(c sidecar.Config) string { return c.HealthAddr }, is: syscall.EADDRINUSE},
		{name: "load fails", cfg: base, loadErr: errors.New("no such bundle"), stage: sidecar.StageLoad},
		{name: "other digest", cfg: func() sidecar.Config { c := base(); c.BundleDigest = "sha256:" + hex64('a'); return c },
			stage: sidecar.StageLoad, projected: true},
		{name: "packed file of another digest", cfg: func() sidecar.Config {
			c := base()
			c.Bundle, c.BundleDigest = packed, "sha256:"+hex64('a')
			return c
		}, stage: sidecar.StageLoad},
		{name: "busy MCP port", cfg: func() sidecar.Config {
			c := base()
			host, port, _ := net.SplitHostPort(busy.Addr().String())
			c.HTTP.Listen, c.HTTP.Port = host, atoi(t, port)
			return c
		}, stage: sidecar.StageListen, addr: func(sidecar.Config) string { return busy.Addr().String() }, projected: true, is: syscall.EADDRINUSE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			var loads, projections int
			err := sidecar.Run(t.Context(), cfg, sidecar.Loaders{
				Load: func(_ context.Context, ref string) (*bundle.Bundle, error) {
					loads++
					if ref != cfg.Bundle || ref == packed {
						t.Errorf("loaded %q as a directory or reference, want %q", ref, cfg.Bundle)
					}
					return b, tc.loadErr
				},
				LoadFile: func(path string) (*bundle.Bundle, error) {
					if path != packed {
						t.Errorf("%s was loaded as a packed file", path)
					}
					return b, tc.loadErr
				},
				Project: func(ctx context.Context, b *bundle.Bundle) (*mcp.CapabilityBundle, error) {
					projections++
					return project(ctx, t, b, cfg)
				},
			})
			se, ok := errors.AsType[*sidecar.StartError](err)
			if !ok {
				t.Fatalf("Run: %v, want a StartError", err)
			}
			if se.Stage != tc.stage {
				t.Errorf("stage %d (%v), want %d", se.Stage, err, tc.stage)
			}
			if tc.addr != nil && se.Addr != tc.addr(cfg) {
				t.Errorf("addr %q, want %q", se.Addr, tc.addr(cfg))
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("%v is not %v", err, tc.is)
			}
			if tc.stage == sidecar.StageConfig && loads != 0 {
				t.Errorf("a refused configuration loaded the bundle %d times", loads)
			}
			if (projections > 0) != tc.projected {
				t.Errorf("projected %d times, want projected %v", projections, tc.projected)
			}
			if tc.stage > sidecar.StageHealth {
				// The probes' port is free again.
				ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", cfg.HealthAddr)
				if err != nil {
					t.Fatalf("the probes' address after a failed start: %v", err)
				}
				ln.Close()
			}
		})
	}
}

// project projects b into its tools calling cfg.Upstream, as the command's
// loader does.
func project(ctx context.Context, t *testing.T, b *bundle.Bundle, cfg sidecar.Config) (*mcp.CapabilityBundle, error) {
	t.Helper()
	co := cfg.Tools
	co.BaseURL = cfg.Upstream
	c, err := openapitools.Project(ctx, b, &co)
	if err != nil {
		return nil, err
	}
	return &mcp.CapabilityBundle{Bundle: b, Capability: c}, nil
}

func hex64(c byte) string { return strings.Repeat(string(c), 64) }

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
