//go:build !sidecaronly

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/openapitools"
)

func newLockCommand() *cobra.Command {
	var out, baseURL string
	capOpts := &openapitools.Options{AllowWrites: true, IgnoreBundleLock: true}
	reg := &registryOptions{}
	cmd := &cobra.Command{
		Use:   "lock BUNDLE [-o FILE]",
		Short: "Pin the bundle's generated tools: names, operations, annotations, schema digests, request shape",
		Long: `lock writes a tools lock: for every operation of the bundle's OpenAPI
interfaces, and every RPC of its gRPC interfaces, that can become a tool
(whatever the method: exposure is still decided by --allow-writes when
serving), its tool name, the operation it
calls, its annotations, SHA-256 digests of its title and description, its
input schema and the operation's response schemas, and where its requests
go and how they are shaped (the bundle's servers URL, each parameter's
location and serialisation, the body's media type, the security
requirements and where each scheme puts its credential), plus one digest
of the whole surface.

A server started with --tools-lock FILE (or serving a bundle that carries
` + openapitools.LockFile + ` at its root, when --tools-lock is not given) offers
a generated tool only when its entry matches; any other is withheld with
reason DRIFT, and locked tools the bundle no longer has are reported.

BUNDLE is a directory or an oci:// reference. Without -o, the lock is
written into a directory bundle as ` + openapitools.LockFile + `, so it travels
with the contract; -o - prints it. The file is written atomically.
--allow-operations and --deny-operations pin a subset, as do the tag and
path filters (--include-tags, --exclude-tags, --include-paths,
--exclude-paths); --descriptions-file pins the descriptions a server given
the same file shows. --tool-mode records the tool mode (all or discover) a
server held to the lock must run in; a server in the other mode refuses to
start, and a lock without it is served in either.`,
		Example: `  kubepact lock examples/bundles/catalog -o catalog.lock.json
  kubepact lock examples/bundles/catalog
  kubepact lock oci://REGISTRY/REPO@sha256:DIGEST -o catalog.lock.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseInapplicable(cmd.Flags(), []flagRule{cacheRule(reg)}); err != nil {
				return err
			}
			ctx := cmd.Context()
			ref := args[0]
			if out == "" {
				info, err := os.Stat(ref)
				if err != nil || !info.IsDir() {
					return &exitError{code: 2, msg: "lock needs -o FILE for a bundle that is not a local directory (or -o - for standard output)"}
				}
				out = filepath.Join(ref, openapitools.LockFile)
			}
			if out != "-" {
				if err := refuseOutputDir(out); err != nil {
					return err
				}
			}
			client, err := reg.client(ctx, ref)
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			lim, err := reg.limits.limits()
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			b, err := bundle.Load(ctx, ref, &bundle.LoadOptions{Client: client, Limits: lim})
			if err != nil {
				return &exitError{code: 2, msg: explainLimit(err).Error()}
			}
			capOpts.MaxSpecBytes = lim.MaxFileBytes
			gopts := &grpctools.Options{AllowWrites: true}
			if hasGRPC(b) {
				if err := splitLists(ctx, b, capOpts, gopts); err != nil {
					return &exitError{code: 2, msg: err.Error()}
				}
			}
			if baseURL != "" {
				// The lock pins the bundle's own servers URL; --base-url
				// only stands in where the spec declares none.
				if own, err := openapitools.Project(ctx, b, capOpts); err == nil {
					return &exitError{code: 2, msg: fmt.Sprintf("--base-url is not used here: the bundle's spec declares its servers URL (%s), which the lock pins, and --base-url only stands in for a spec that declares none: drop --base-url", ownBase(own))}
				}
			}
			capOpts.BaseURL = baseURL
			c, err := openapitools.Project(ctx, b, capOpts)
			if err != nil {
				return &exitError{code: 2, msg: fieldsToFlags(err, openapitools.FlagNames, map[string]string{"BaseURL": "--base-url"}).Error()}
			}
			for _, w := range c.Withheld {
				if w.Code != openapitools.WithheldWritesNotAllowed {
					fmt.Fprintf(cmd.ErrOrStderr(), "kubepact lock: not pinned: %s (%s %s): %s\n", w.Name, w.Method, w.Path, w.Reason)
				}
			}
			var rpcs []openapitools.LockedRPC
			if hasGRPC(b) {
				g, err := grpctools.Project(ctx, b, gopts)
				if err != nil {
					return &exitError{code: 2, msg: fieldsToFlags(err, grpcFlagNames).Error()}
				}
				for _, w := range g.Withheld {
					if w.Code == grpctools.WithheldDenied || w.Code == grpctools.WithheldNotAllowed {
						continue
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "kubepact lock: not pinned: %s (%s): %s\n", w.Name, w.RPC, w.Reason)
				}
				for _, line := range g.Warnings {
					if strings.Contains(line, "no gRPC tool is served") {
						fmt.Fprintf(cmd.ErrOrStderr(), "kubepact lock: %s\n", line)
					}
				}
				for _, t := range g.Tools {
					rpcs = append(rpcs, t.Pin())
				}
			}
			l := openapitools.NewLock(c, rpcs...)
			if cmd.Flags().Changed("tool-mode") {
				mode := l.RecordMode(c)
				if capOpts.ToolMode == openapitools.ToolModeAuto {
					fmt.Fprintf(cmd.ErrOrStderr(), "kubepact lock: --tool-mode auto records %s mode for these %d tool(s)\n", mode, len(c.Tools))
				}
			}
			if out == "-" {
				raw, err := l.Marshal()
				if err != nil {
					return &exitError{code: 2, msg: err.Error()}
				}
				_, err = cmd.OutOrStdout().Write(raw)
				return err
			}
			if err := openapitools.WriteLockFile(out, l); err != nil {
				logr.FromContextOrDiscard(ctx).V(1).Info("Writing the output failed", "path", out, "error", err.Error())
				return &exitError{code: 2, msg: outputFailure(out, err)}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %d tool(s) of %s, lockDigest %s\n", out, len(l.Tools)+len(l.GRPC), l.Service, l.LockDigest)
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write the lock to; - for standard output (default: "+openapitools.LockFile+" in a directory BUNDLE)")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "base URL, needed only when the spec declares no absolute servers[0].url (the lock pins the bundle's own servers URL, never this one)")
	cmd.Flags().StringSliceVar(&capOpts.AllowOperations, "allow-operations", nil, "pin only these tools, by name (a gRPC tool also as Service/Method; comma-separated, repeatable)")
	cmd.Flags().StringSliceVar(&capOpts.DenyOperations, "deny-operations", nil, "leave these tools out of the lock, by name (a gRPC tool also as Service/Method; comma-separated, repeatable)")
	cmd.Flags().StringSliceVar(&capOpts.IncludeTags, "include-tags", nil, "pin only operations carrying one of these OpenAPI tags (comma-separated, repeatable)")
	cmd.Flags().StringSliceVar(&capOpts.ExcludeTags, "exclude-tags", nil, "leave operations carrying one of these OpenAPI tags out of the lock (comma-separated, repeatable)")
	cmd.Flags().StringSliceVar(&capOpts.IncludePaths, "include-paths", nil, "pin only operations whose path lies under one of these prefixes, segment by segment (comma-separated, repeatable)")
	cmd.Flags().StringSliceVar(&capOpts.ExcludePaths, "exclude-paths", nil, "leave operations whose path lies under one of these prefixes out of the lock (comma-separated, repeatable)")
	cmd.Flags().StringVar(&capOpts.DescriptionsFile, "descriptions-file", "", "pin the descriptions this file gives (operationId: description, YAML or JSON), as a server given the same --descriptions-file shows them")
	cmd.Flags().StringVar(&capOpts.ToolMode, "tool-mode", "", "record the tool mode servers held to the lock must run in: all or discover (auto records what it settles to for the pinned tools); without it the lock pins no mode")
	reg.BindFlags(cmd.Flags())
	return cmd
}

// ownBase names the servers URLs a projection's interfaces declare.
func ownBase(c *openapitools.Capability) string {
	var urls []string
	for _, in := range c.Interfaces {
		if !slices.Contains(urls, in.BaseURL) {
			urls = append(urls, in.BaseURL)
		}
	}
	return strings.Join(urls, ", ")
}
