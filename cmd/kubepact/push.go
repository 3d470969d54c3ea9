//go:build !sidecaronly

package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/bundle/validate"
)

func newPushCommand() *cobra.Command {
	reg := &registryOptions{}
	cmd := &cobra.Command{
		Use:   "push DIR oci://REF",
		Short: "Validate a bundle directory and push it to an OCI registry",
		Long: `push validates the bundle (an invalid bundle is never pushed, nor one
that refers to other bundles by local path: publish those first), packs it
reproducibly and pushes it as a single-layer OCI image in Pacto's format.
It prints the manifest digest: the bundle's identity, the same digest
"kubepact pack" and "kubepact check" report for the directory.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseInapplicable(cmd.Flags(), []flagRule{cacheRule(reg)}); err != nil {
				return err
			}
			if !bundle.IsOCIRef(args[1]) {
				return &exitError{code: 2, msg: fmt.Sprintf("%q is not a registry reference: give oci://REGISTRY/REPOSITORY[:TAG]", args[1])}
			}
			ref, err := oci.ParseReference(args[1])
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			ctx := cmd.Context()
			client, err := reg.client(ctx, args[1])
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			b, err := bundle.LoadDir(args[0], &bundle.LoadOptions{Limits: reg.limits.lim})
			if err != nil {
				return &exitError{code: 2, msg: explainLimit(err).Error()}
			}
			res := validate.Validate(ctx, b.FS, &validate.Options{Resolver: bundle.ResolverFor(b, client), MaxSpecBytes: reg.limits.lim.MaxFileBytes})
			if !res.Valid() {
				var lines []string
				for _, f := range res.Errors {
					lines = append(lines, fmt.Sprintf("  %s %s: %s", f.Code, orRoot(f.Path), f.Message))
				}
				return &exitError{code: 1, msg: fmt.Sprintf("not pushing %s: it is invalid\n%s", b.Source, strings.Join(lines, "\n"))}
			}
			if local := localRefs(b.Contract); len(local) > 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("not pushing %s: it refers to other bundles by local path, which no one pulling it can follow; "+
					"publish them and refer to them as oci://REGISTRY/REPOSITORY[:TAG][@DIGEST]\n%s", b.Source, strings.Join(local, "\n"))}
			}
			img, err := b.Image()
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			dgst, err := client.Push(ctx, ref, img)
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", dgst)
			return err
		},
	}
	reg.BindFlags(cmd.Flags())
	return cmd
}

// localRefs lists the references of c to other bundles that are local
// (file:// or a bare path), one "  path: ref" line each. They serve during
// development; in a pushed bundle they name the publisher's directories.
func localRefs(c *contract.Contract) []string {
	if c == nil {
		return nil
	}
	var out []string
	add := func(path, ref string) {
		if ref != "" && !bundle.IsOCIRef(ref) {
			out = append(out, fmt.Sprintf("  %s: %s", path, ref))
		}
	}
	for i, d := range c.Dependencies {
		add(fmt.Sprintf("dependencies[%d].ref", i), d.Ref)
	}
	for i, cfg := range c.Configurations {
		add(fmt.Sprintf("configurations[%d].ref", i), cfg.Ref)
	}
	for i, p := range c.Policies {
		add(fmt.Sprintf("policies[%d].ref", i), p.Ref)
	}
	return out
}
