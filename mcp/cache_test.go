package mcp

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestCacheHints: a 2026-07-28 client over HTTP reads ttlMs and cacheScope
// (SEP-2549) that say what can change: discover and every list are fixed
// for the server's life; a local bundle's skill is read from disk on every
// call (ttl 0) while a pulled bundle's is fixed; behind a bearer token the
// scope is private.
func TestCacheHints(t *testing.T) {
	fixed := int(FixedListTTL.Milliseconds())
	skill := skillURIPrefix + "refund-a-payment"
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pulled := func(t *testing.T) *Server {
		b, err := bundle.LoadDir("../examples/bundles/payments", nil)
		if err != nil {
			t.Fatal(err)
		}
		c, err := openapitools.Project(t.Context(), b, nil)
		if err != nil {
			t.Fatal(err)
		}
		b.Source.Dir = "" // served from the bundle's files, as a pulled bundle is
		return newTestServer(t, &Options{Transport: TransportHTTP, Families: []Family{FamilyCapability}, Capability: &CapabilityBundle{Bundle: b, Capability: c}})
	}
	for _, tc := range []struct {
		name      string
		server    func(t *testing.T) *Server
		token     string
		skillTTL  int
		wantScope string
	}{
		{"local bundle", func(t *testing.T) *Server {
			return capabilityServer(t, "../examples/bundles/payments", nil, &Options{Transport: TransportHTTP})
		}, "", 0, "public"},
		{"pulled bundle", pulled, "", fixed, "public"},
		{"behind a bearer token", func(t *testing.T) *Server {
			return capabilityServer(t, "../examples/bundles/payments", nil, &Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{AuthTokenFile: tokenFile}})
		}, "s3cret-token", 0, "private"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hc *http.Client
			if tc.token != "" {
				hc = &http.Client{Transport: bearer{token: tc.token, next: http.DefaultTransport}}
			}
			cs, err := httpClient(t.Context(), t, serveHTTP(t, tc.server(t)), "2026-07-28", hc)
			if err != nil {
				t.Fatal(err)
			}
			tools, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			prompts, err := cs.ListPrompts(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			resources, err := cs.ListResources(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			withheld, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: withheldURI})
			if err != nil {
				t.Fatal(err)
			}
			read, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: skill})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []struct {
				what string
				got  sdk.Cacheable
				ttl  int
			}{
				{"tools/list", tools.Cacheable, fixed},
				{"prompts/list", prompts.Cacheable, fixed},
				{"resources/list", resources.Cacheable, fixed},
				{"resources/read " + withheldURI, withheld.Cacheable, fixed},
				{"resources/read " + skill, read.Cacheable, tc.skillTTL},
			} {
				if r.got.TTLMs != r.ttl || r.got.CacheScope != tc.wantScope {
					t.Errorf("%s: ttlMs %d, cacheScope %q; want %d, %q", r.what, r.got.TTLMs, r.got.CacheScope, r.ttl, tc.wantScope)
				}
			}
		})
	}
}
