package mcp

import (
	"errors"
	"testing"
	"time"
)

// TestOptionErrorNamed: a command names the refused option and every
// option its message mentions by the command's flags, from the error's
// fields (Named), in exactly the words the word-rewriting FlagWords gives
// the same text, so what users read did not change.
func TestOptionErrorNamed(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string // Named(FlagNames), when the case pins it
	}{
		{opts: Options{Transport: "sse"}, want: `--transport "sse": want stdio or http`},
		{opts: Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{MaxRequestBytes: 100, MaxRequestBytesInFlight: 10}},
			want: "--max-request-bytes-in-flight 10 is less than --max-request-bytes (100), so a request of the largest size accepted could never be read: raise it, or lower --max-request-bytes"},
		{opts: Options{HTTPOptions: HTTPOptions{MaxSessionsPerIdentity: -1}}},
		{opts: Options{Transport: TransportHTTP, HTTPOptions: HTTPOptions{Listen: "0.0.0.0"}},
			want: "--listen 0.0.0.0 reaches beyond loopback without authentication: set --auth-token-file (or an Authenticator), or --allow-unauthenticated-remote to accept that risk"},
		{opts: Options{FleetRefsOnly: true}},
		{opts: Options{Fleet: FleetOptions{Enabled: true}},
			want: "--fleet needs at least one source: set --local (directories scanned for bundles), --oci (oci:// references of published bundles) or --target-state (a pacto.dev/fleet-targets/v1 file); nothing is scanned implicitly"},
		{opts: Options{Families: []Family{FamilyFleet}}},
		{opts: Options{Fleet: FleetOptions{Local: []string{"."}}}, want: "--local, --oci and --target-state are fleet sources: set --fleet to serve the fleet tools"},
		{opts: Options{Fleet: FleetOptions{Enabled: true, Local: []string{"."}, Freshness: -time.Second}}},
		{opts: Options{Families: []Family{FamilyCatalog}}},
		{opts: Options{Catalog: CatalogOptions{Roots: []string{"oci://r/x:1", " "}}}, want: "--root[1] is empty: a root needs a reference, a local bundle directory or an oci:// reference"},
		{opts: Options{Budget: BudgetOptions{MaxCalls: 2, MaxCallsPerCaller: 3}}},
		{opts: Options{Budget: BudgetOptions{BundleMemory: 1 << 20, CallBundleMemory: 1 << 30}}},
	} {
		o := tc.opts
		o.Workspace = t.TempDir()
		o.setDefaults()
		err := o.validate()
		oe, ok := errors.AsType[*OptionError](err)
		if !ok {
			t.Errorf("%+v: %v, want an OptionError", tc.opts, err)
			continue
		}
		got := oe.Named(FlagNames)
		if words := FlagWords(err.Error(), FlagNames); got != words {
			t.Errorf("Named:     %s\nFlagWords: %s", got, words)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("Named: %s\nwant:  %s", got, tc.want)
		}
		if got == err.Error() {
			t.Errorf("Named(FlagNames) names no flag: %s", got)
		}
	}
}
