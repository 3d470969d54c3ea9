package main

import (
	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/kubepact/kubepact/mcp"
)

func newMCPCommand() *cobra.Command {
	opts := mcp.DefaultOptions()
	reg := &registryOptions{}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the Pacto MCP surface over stdio or Streamable HTTP",
		Long: `mcp serves the Pacto tools to an MCP client: pacto_create, pacto_edit,
pacto_check and pacto_schema (authoring, confined to --workspace), and
pacto_server_info. stdio is the default transport; -t http serves Streamable
HTTP at http://127.0.0.1:8585/mcp for both the 2025-11-25 (session) and the
2026-07-28 (stateless) protocol eras.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			opts.Version = version
			opts.Logger = logr.FromContextOrDiscard(ctx).WithName("mcp")
			client, err := reg.client()
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			opts.Registry = client
			s, err := mcp.New(opts)
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			return s.Run(ctx)
		},
	}
	opts.BindFlags(cmd.Flags())
	reg.BindFlags(cmd.Flags())
	return cmd
}
