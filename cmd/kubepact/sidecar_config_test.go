package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/internal/sidecar"
)

// sidecarConfigOf is the Config the sidecar command reads from args (a
// container's command line, "sidecar" first).
func sidecarConfigOf(t *testing.T, args []string) sidecar.Config {
	t.Helper()
	if len(args) == 0 || args[0] != "sidecar" {
		t.Fatalf("args %q do not start with the sidecar command", args)
	}
	// The binding newSidecarCommand gives its flag set.
	o := newSidecarOptions()
	fs := pflag.NewFlagSet("sidecar", pflag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		t.Fatalf("the sidecar command refuses %q: %v", args, err)
	}
	return o.config()
}

// TestSidecarConfigRoundTrip: a Config written as a command line
// (Config.Args, what the webhook puts in the container) and parsed by the
// sidecar command's own flags is the same Config, for the webhook's
// Configs and for one that sets every field Args writes.
func TestSidecarConfigRoundTrip(t *testing.T) {
	digest := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	every := sidecar.DefaultConfig()
	every.Bundle, every.BundleDigest = "/var/run/kubepact/bundle/bundle.tar.gz", digest
	every.Upstream = "http://10.0.0.7:9000"
	every.AllowRemoteUpstream = true
	every.GRPCTarget = "127.0.0.1:9090"
	every.HealthAddr = "127.0.0.1:9586"
	every.MemoryLimitMiB = 48
	every.MaxProcs = 2
	every.HTTP.Port = 9585
	every.HTTP.Listen = "0.0.0.0"
	every.HTTP.AuthTokenFile = "/var/run/secrets/token"
	every.Tools.Auth = []string{"bearer=abc", "key=def"}
	every.Tools.AuthFiles = []string{"basic=/s/basic"}
	every.Tools.AllowWrites = true
	every.Tools.AllowOperations = []string{"listProducts", "getProduct"}
	every.Tools.DenyOperations = []string{"deleteProduct"}
	every.Tools.IncludeTags, every.Tools.ExcludeTags = []string{"products", "stock"}, []string{"internal"}
	every.Tools.IncludePaths, every.Tools.ExcludePaths = []string{"/products"}, []string{"/products/{productId}/stock", "/admin"}
	every.Tools.DescriptionsFile = "/etc/kubepact/descriptions.yaml"
	every.Tools.AllowCredentialsInQuery = true
	every.Tools.Timeout = 7 * time.Second
	every.Tools.MaxResponseBytes = 4096
	every.Tools.ConfirmWrites = "always"
	every.Tools.MaxNameLength = 60
	every.Tools.ToolMode = "discover"
	every.Tools.ToolPins = []string{"getHealth", "getProduct"}
	every.ToolsLock = "/etc/kubepact/tools.lock.json"
	every.Registry.NoCache, every.Registry.PlainHTTP = true, true
	every.Registry.SecretFile = "/var/run/secrets/kubepact/registry/config.json"
	every.Registry.ConfigPath = "/home/app/.docker/config.json"
	every.Registry.CacheDir = "/tmp/kubepact-cache"
	every.Registry.AllowedRegistries = []string{"registry.example:5000", "ghcr.io"}
	every.Registry.Timeout = 90 * time.Second
	every.Limits.MaxFileBytes, every.Limits.MaxTotalBytes, every.Limits.MaxEntries = 1<<20, 8<<20, 500

	webhook := injection.SidecarOptions{}.Config("oci://127.0.0.1:5000/bundles/catalog@"+digest, digest, 8080)
	plain := injection.SidecarOptions{PlainHTTP: true, MCPPort: 7585, HealthPort: 7586}.Config("/var/run/kubepact/bundle/bundle.tar.gz", digest, 3000)
	for name, want := range map[string]sidecar.Config{"webhook": webhook, "webhook, plain HTTP and other ports": plain, "every field Args writes": every} {
		t.Run(name, func(t *testing.T) {
			args := want.Args()
			got := sidecarConfigOf(t, args)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("args %q read back as\n%+v\nwant\n%+v", args, got, want)
			}
			if again := got.Args(); !reflect.DeepEqual(again, args) {
				t.Errorf("written again: %q, want %q", again, args)
			}
		})
	}
}
