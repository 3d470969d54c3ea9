//go:build !sidecaronly

package main

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/atomicfile"
)

func newPackCommand() *cobra.Command {
	var out string
	limits := &limitOptions{}
	cmd := &cobra.Command{
		Use:   "pack DIR -o FILE",
		Short: "Pack a bundle directory into its reproducible layer (tar+gzip)",
		Long: `pack writes the bundle's layer — the .pactoignore-filtered files, with
normalized headers, so the same files always give the same bytes — and
prints the identity (manifest digest) the bundle will have once pushed.
The file is written atomically: it is either complete or absent.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{code: 2, msg: "pack needs -o FILE: where to write the layer"}
			}
			if err := refuseOutputDir(out); err != nil {
				return err
			}
			lim, err := limits.limits()
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			b, err := bundle.LoadDir(args[0], &bundle.LoadOptions{Limits: lim})
			if err != nil {
				return &exitError{code: 2, msg: explainLimit(err).Error()}
			}
			img, err := b.Image()
			if err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			if err := writeFileAtomic(out, img.Layer); err != nil {
				logr.FromContextOrDiscard(cmd.Context()).V(1).Info("Writing the output failed", "path", out, "error", err.Error())
				return &exitError{code: 2, msg: outputFailure(out, err)}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s\n", b.Identity)
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write the layer to (required)")
	limits.BindFlags(cmd.Flags())
	return cmd
}

// writeFileAtomic writes data to path through internal/atomicfile, so path
// never holds a partial file.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
