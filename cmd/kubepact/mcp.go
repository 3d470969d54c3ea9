//go:build !sidecaronly

package main

import (
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/mcp"
)

func newMCPCommand() *cobra.Command {
	opts := mcp.DefaultOptions()
	reg := &registryOptions{}
	capOpts := &capabilityOptions{}
	k8s := &k8sFleetOptions{}
	auth := &oauthFlags{}
	cmd := &cobra.Command{
		Use:   "mcp [BUNDLE]",
		Short: "Serve the Pacto MCP surface over stdio or Streamable HTTP",
		Long: `mcp serves the Pacto tools to an MCP client. Families combine on one
server:

  authoring   pacto_create, pacto_edit, pacto_check, pacto_schema — on by
              default; read and write contract files only below --workspace
  capability  with BUNDLE (a directory or an oci:// reference): every
              OpenAPI operation of the bundle as a tool calling the live
              service (GET and HEAD only unless --allow-writes), plus
              pacto_skill and pacto_withheld
  fleet       with --fleet and at least one of --local, --oci,
              --target-state, or with --k8s (the cluster, watched live):
              pacto_fleet_search/get/graph/status/explain and pacto_impact
              over live, versioned snapshots
  payload     pacto_validate_payload, pacto_explain_field — on by default;
              check a JSON value against a service's contract, or explain
              one of its fields; the service is a bundle directory in the
              workspace, an oci:// reference, BUNDLE's service name or, with
              the fleet, a fleet service name or name@version
  catalog     with --root (repeatable; a bundle directory or an oci://
              reference): the resources pacto://catalog and
              pacto://catalog/closure and pacto_catalog_revision over the
              roots and their dependency closure, re-resolved every
              --catalog-refresh so a moved tag is a new catalogId

pacto_server_info describes the running server. --read-only registers no
tool that can write anything. stdio is the default transport; -t http
serves Streamable HTTP at http://127.0.0.1:8585/mcp for both the 2025-11-25
(session) and the 2026-07-28 (stateless) protocol eras.`,
		Example: `  kubepact mcp --workspace ~/contracts
  kubepact mcp examples/bundles/catalog --base-url http://127.0.0.1:8080
  kubepact mcp -t http --fleet --local examples/bundles --target-state examples/fleet/targets.yaml
  kubepact mcp --fleet --k8s --namespace shop
  kubepact mcp --root oci://ghcr.io/acme/platform:1.4.0 --root ./experimental-platform`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// Authentication first: the other rules read what it sets up.
			if err := refuseInapplicable(cmd.Flags(), auth.rules(opts)); err != nil {
				return err
			}
			if err := auth.applyMode(&opts.HTTPOptions); err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			if err := refuseInapplicable(cmd.Flags(), mcpFlagRules(opts, capOpts, reg, k8s, len(args) == 1)); err != nil {
				return err
			}
			ctx := cmd.Context()
			opts.Version = version
			opts.Logger = logr.FromContextOrDiscard(ctx).WithName("mcp")
			if k8s.enabled && !cmd.Flags().Changed("allowed-registries") {
				// The cluster's ServiceContracts name the registries: any,
				// at a public address, as in the operator.
				reg.AllowedRegistries = []string{oci.AnyRegistry}
			}
			named := append(slices.Clone(args), opts.Fleet.OCI...)
			client, err := reg.client(ctx, append(named, opts.Catalog.Roots...)...)
			if err != nil {
				return &exitError{code: 2, msg: inWords(err)}
			}
			opts.Registry = client
			if !reg.NoCache && reg.CacheDir != "" {
				// --local bundles' identities and verdicts, beside the
				// pulled content, under the same switch.
				opts.Fleet.CacheDir = filepath.Join(reg.CacheDir, "fleet")
			}
			if opts.Transport == mcp.TransportHTTP {
				// /metrics beside /mcp, behind the same checks and token:
				// this process's own registry, with the per-tool series
				// and the Go runtime's and the process's.
				reg := prometheus.NewRegistry()
				reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
				opts.Registerer, opts.Metrics = reg, reg
			}
			if err := k8s.validate(&opts.Fleet); err != nil {
				return &exitError{code: 2, msg: inWords(err)}
			}
			if k8s.enabled {
				if err := k8s.start(ctx, &opts.Fleet, client); err != nil {
					if ctx.Err() != nil {
						return ctx.Err() // interrupted while waiting for the cluster
					}
					return &exitError{code: 2, msg: inWords(err)}
				}
			}
			if len(args) == 1 {
				cb, err := capOpts.loadCapability(ctx, args[0], client, &reg.limits, os.Stderr, "kubepact mcp")
				if err != nil {
					return &exitError{code: 2, msg: inWords(err)}
				}
				opts.Capability = cb
				if !slices.Contains(opts.Families, mcp.FamilyCapability) {
					opts.Families = append(opts.Families, mcp.FamilyCapability)
				}
			}
			s, err := mcp.NewServer(ctx, opts)
			if err != nil {
				return &exitError{code: 2, msg: inWords(fieldsToFlags(err, mcp.FlagNames, oci.FlagNames))}
			}
			defer s.Close()
			if opts.Capability != nil {
				// Projecting a large API leaves most of its garbage behind
				// (decoded documents); hand it back before serving.
				debug.FreeOSMemory()
			}
			err = s.Run(ctx)
			if msg, ok := listenFailure(err, net.JoinHostPort(opts.Listen, strconv.Itoa(opts.Port)), "--listen and --port"); ok {
				return &exitError{code: 2, msg: msg}
			}
			return err
		},
	}
	opts.BindFlags(cmd.Flags())
	reg.BindFlags(cmd.Flags())
	k8s.BindFlags(cmd.Flags())
	auth.bindMode(cmd.Flags())
	auth.o.BindFlags(cmd.Flags())
	capOpts.bindFlags(cmd.Flags(), "base-url", "base URL of the service BUNDLE describes (default: the spec's first server URL); required with --auth")
	capOpts.bindRemoteFlags(cmd.Flags())
	return cmd
}

// mcpFlagRules are the rules of `kubepact mcp`; hasBundle is whether
// BUNDLE is given.
func mcpFlagRules(opts *mcp.Options, capOpts *capabilityOptions, reg *registryOptions, k8s *k8sFleetOptions, hasBundle bool) []flagRule {
	fleetOn := func() bool {
		return opts.Fleet.Enabled || k8s.enabled || slices.Contains(opts.Families, mcp.FamilyFleet)
	}
	rules := []flagRule{
		{flags: httpFlags(), applies: func() bool { return opts.Transport != mcp.TransportStdio },
			why: "%[1]s applies to the HTTP transport, and this server speaks stdio (the default): add -t http to serve Streamable HTTP, or drop %[1]s"},
		{flags: capabilityFlags("base-url"), applies: func() bool { return hasBundle },
			why: "%[1]s configures the tools generated from BUNDLE, and no BUNDLE is given: name one first (kubepact mcp DIR|oci://REF %[1]s …), or drop %[1]s"},
		{flags: []string{"allow-writes"}, applies: func() bool { return !opts.ReadOnly || !capOpts.AllowWrites },
			why: "%[1]s exposes the generated tools that write, and --read-only registers no tool that can write: choose one of them"},
		{flags: []string{"freshness", "snapshot-retention", "traces"}, applies: fleetOn,
			why: "%[1]s applies to the fleet tools, which are off: add --fleet with a source (--local, --oci, --target-state) or --k8s, or drop %[1]s"},
		{flags: []string{"catalog-refresh", "catalog-max-depth", "catalog-max-revisions"}, applies: func() bool {
			return len(opts.Catalog.Roots) > 0 || slices.Contains(opts.Families, mcp.FamilyCatalog)
		}, why: "%[1]s applies to the catalog, which is off: add --root REF (a bundle directory or an oci:// reference), or drop %[1]s"},
		{flags: []string{"allow-unauthenticated-remote"}, applies: func() bool {
			return !netx.IsLoopbackHost(opts.Listen) && opts.AuthTokenFile == "" && opts.Authenticator == nil
		}, why: "%[1]s permits listening beyond loopback without a token, and here there is nothing to permit (--listen is loopback, or --auth-token-file or --mcp-auth oauth authenticates every request): drop %[1]s"},
		cacheRule(reg),
	}
	return append(rules, capabilityRules(capOpts)...)
}
