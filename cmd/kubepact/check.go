//go:build !sidecaronly

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/failure"
	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/internal/grpctools/reflectcheck"
)

func newCheckCommand() *cobra.Command {
	reg := &registryOptions{}
	var output, reflectTarget string
	cmd := &cobra.Command{
		Use:   "check [PATH|oci://REF]",
		Short: "Validate a bundle: schema, cross-field rules and policies",
		Long: `check loads a bundle from a directory (default ".") or an oci:// reference
and validates it in three layers: structural (the pacto.yaml JSON Schema),
cross-field (names, versions, references, the bundle's real files) and
policy. Exit status: 0 valid (warnings allowed), 1 invalid, 2 could not check
(including a referenced bundle whose registry did not answer: REF_UNREACHABLE).
With --grpc-reflect HOST:PORT a valid bundle's grpc interfaces are also
compared with the running server's reflection: a difference is an error
(GRPC_REFLECT_*), a method only the server has a warning, and a server
that cannot be asked (no reflection, a stall, descriptors past the bounds)
exits 2 (GRPC_REFLECTION_FAILED).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseInapplicable(cmd.Flags(), checkFlagRules(reg)); err != nil {
				return err
			}
			if output != "text" && output != "json" {
				return &exitError{code: 2, msg: fmt.Sprintf("-o %q is not accepted; use text or json", output)}
			}
			ref := "."
			if len(args) == 1 {
				ref = args[0]
			}
			// With -o json, stdout holds one JSON document whatever happens,
			// so a CI step parsing it never reads an empty one: a bundle
			// that cannot be checked is reported as a failed check.
			couldNotCheck := func(code string, err error) error {
				if output == "json" {
					_ = writeJSON(cmd.OutOrStdout(), failedCheckReport(ref, code, err))
				}
				return &exitError{code: 2, msg: inWords(err)}
			}
			ctx := cmd.Context()
			client, err := reg.client(ctx, ref)
			if err != nil {
				return couldNotCheck(codeRegistryConfigInvalid, err)
			}
			lim := reg.limits.lim
			b, err := bundle.Load(ctx, ref, &bundle.LoadOptions{Client: client, Limits: lim})
			if err != nil {
				return couldNotCheck(loadFailureCode(err), explainLimit(err))
			}
			res := validate.Validate(ctx, b.FS, &validate.Options{Resolver: bundle.ResolverFor(b, client), MaxSpecBytes: lim.MaxFileBytes})
			rep := newCheckReport(b, res)
			if reflectTarget != "" && res.Valid() {
				if err := rep.crossCheck(ctx, b, reflectTarget); err != nil {
					return couldNotCheck(codeReflectionFailed, fmt.Errorf("--grpc-reflect: %w", err))
				}
			}
			if output == "json" {
				err = writeJSON(cmd.OutOrStdout(), rep)
			} else {
				err = rep.writeText(cmd.OutOrStdout())
			}
			if err != nil {
				return &exitError{code: 2, msg: inWords(err)}
			}
			if res.CouldNotCheck() {
				return &exitError{code: 2}
			}
			if !rep.Valid {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&reflectTarget, "grpc-reflect", "", "host:port (loopback) of a running gRPC server: compare the bundle's grpc interfaces with what its reflection service reports (missing services and methods, streaming, message types, field numbers and types); tools are never built from it")
	reg.BindFlags(cmd.Flags())
	return cmd
}

// checkReport is what check prints; its JSON form is the findings shape of
// pacto_check ({path, code, message}, split into errors and warnings).
type checkReport struct {
	Valid bool `json:"valid"`
	// CouldNotCheck is true when the bundle could not be read (its one
	// error is coded by bundle/failure) or the only errors are
	// REF_UNREACHABLE: it is not known to be invalid (exit status 2).
	CouldNotCheck bool               `json:"couldNotCheck,omitempty"`
	Source        string             `json:"source"`
	Identity      string             `json:"identity,omitempty"`
	Service       string             `json:"service,omitempty"`
	Version       string             `json:"version,omitempty"`
	Errors        []validate.Finding `json:"errors"`
	Warnings      []validate.Finding `json:"warnings"`
}

// codeReflectionFailed is the code of a --grpc-reflect cross-check that
// could not be made: the server could not be asked.
const codeReflectionFailed = "GRPC_REFLECTION_FAILED"

// crossCheck adds the differences between b's grpc interfaces and the
// reflection of the server at target: errors, and warnings for methods
// only the server has. It fails when the server cannot be asked.
func (r *checkReport) crossCheck(ctx context.Context, b *bundle.Bundle, target string) error {
	found, err := reflectcheck.Check(ctx, b, target, nil)
	if err != nil {
		return err
	}
	for _, f := range found {
		vf := validate.Finding{Path: "interfaces[" + f.Interface + "]: " + f.Path, Code: f.Code, Message: f.Message}
		if f.Warning {
			r.Warnings = append(r.Warnings, vf)
		} else {
			r.Errors = append(r.Errors, vf)
			r.Valid = false
		}
	}
	return nil
}

// codeRegistryConfigInvalid is the code of a check that could not be
// made because the registry flags or credential files cannot be used;
// every other such check is coded by bundle/failure, as MCP answers are.
const codeRegistryConfigInvalid = "REGISTRY_CONFIG_INVALID"

// loadFailureCode names why bundle.Load failed: bundle/failure's code, the
// one MCP answers give the same failure.
func loadFailureCode(err error) string { return failure.Classify(err).Code() }

// failedCheckReport is the report of a check that could not be made.
func failedCheckReport(ref, code string, err error) checkReport {
	return checkReport{
		CouldNotCheck: true,
		Source:        ref,
		Errors:        []validate.Finding{{Code: code, Message: inWords(err)}},
		Warnings:      []validate.Finding{},
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newCheckReport(b *bundle.Bundle, res validate.Result) checkReport {
	rep := checkReport{
		Valid:         res.Valid(),
		CouldNotCheck: res.CouldNotCheck(),
		Source:        b.Source.String(),
		Identity:      b.Identity.String(),
		Errors:        res.Errors,
		Warnings:      res.Warnings,
	}
	if rep.Errors == nil {
		rep.Errors = []validate.Finding{}
	}
	if rep.Warnings == nil {
		rep.Warnings = []validate.Finding{}
	}
	if b.Contract != nil {
		rep.Service, rep.Version = b.Contract.Service.Name, b.Contract.Service.Version
	}
	return rep
}

func (r checkReport) writeText(w io.Writer) error {
	name := r.Source
	if r.Service != "" {
		name = fmt.Sprintf("%s %s (%s)", r.Service, r.Version, r.Source)
	}
	verdict := "valid"
	switch {
	case r.CouldNotCheck:
		verdict = "COULD NOT CHECK"
	case !r.Valid:
		verdict = "INVALID"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s — %s, %s\n", name, verdict, plural(len(r.Errors), "error"), plural(len(r.Warnings), "warning"))
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, f := range r.Errors {
		fmt.Fprintf(tw, "  error\t%s\t%s\t%s\n", f.Code, orRoot(f.Path), f.Message)
	}
	for _, f := range r.Warnings {
		fmt.Fprintf(tw, "  warning\t%s\t%s\t%s\n", f.Code, orRoot(f.Path), f.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Identity != "" {
		fmt.Fprintf(&b, "identity: %s\n", r.Identity)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// checkFlagRules are the rules of `kubepact check`: every registry flag
// may apply even to a local bundle, whose policy references may name a
// registry.
func checkFlagRules(reg *registryOptions) []flagRule { return []flagRule{cacheRule(reg)} }
