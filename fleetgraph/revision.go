package fleetgraph

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/diff"
	"github.com/kubepact/kubepact/bundle/validate"
)

// maxFindings bounds the validation findings a revision keeps.
const maxFindings = 20

// RevisionOptions configure NewRevision.
type RevisionOptions struct {
	// Source is the id of the contributing source.
	Source string
	// Domain is the registry and organisation path; empty for a local
	// bundle. NewRevision derives it from an OCI bundle's reference when
	// empty.
	Domain string
	// Validate runs bundle/validate offline (references to other bundles
	// are not followed) and records the verdict.
	Validate bool
	// Verdict, with Validate, is the verdict an earlier NewRevision
	// reached on a bundle of the same identity (Revision.Verdict): it is
	// recorded instead of validating again. Offline validation reads
	// nothing but the bundle's content, which the identity digests.
	Verdict *Verdict
}

// Verdict is what offline validation said of a bundle, as a revision
// records it.
type Verdict struct {
	Valid    bool
	Findings []Finding
}

// Verdict returns the validation verdict r records, or nil when r was not
// validated.
func (r *Revision) Verdict() *Verdict {
	if r.Valid == nil {
		return nil
	}
	return &Verdict{Valid: *r.Valid, Findings: slices.Clip(r.Findings)}
}

// ErrNoContract is returned for a bundle whose pacto.yaml did not parse:
// it has no service name, so no identity in the fleet.
var ErrNoContract = diff.ErrNoContract

// NewRevision derives a fleet revision from a loaded bundle: identity,
// the fields queries use and the declared edges. The bundle itself is not
// kept.
func NewRevision(ctx context.Context, b *bundle.Bundle, opts *RevisionOptions) (*Revision, error) {
	if opts == nil {
		opts = &RevisionOptions{}
	}
	if b.Contract == nil {
		return nil, fmt.Errorf("%w: %w", ErrNoContract, b.ParseErr)
	}
	c := b.Contract
	r := &Revision{
		Domain:       opts.Domain,
		Name:         c.Service.Name,
		Version:      c.Service.Version,
		PactoVersion: c.PactoVersion,
		Digest:       b.Identity.String(),
		Workload:     c.Workload,
		Source:       opts.Source,
	}
	if b.Source.Ref != "" {
		ref := parseRef(b.Source.Ref)
		if r.Domain == "" {
			r.Domain = ref.domain
		}
		r.RequestedRef = b.Source.Ref
		r.ResolvedRef = "oci://" + ref.domain + "/" + ref.repo + "@" + r.Digest
		r.Location = r.ResolvedRef
	}
	if b.Source.Dir != "" {
		r.Location = b.Source.Dir
	}
	if c.Service.Owner != nil {
		r.Owner = c.Service.Owner.Team
	}
	for _, i := range c.Interfaces {
		r.Interfaces = append(r.Interfaces, i.Name+":"+i.Type+":"+i.Visibility)
	}
	for _, cp := range c.Capabilities {
		r.Capabilities = append(r.Capabilities, cp.Type)
	}
	r.Edges = contractEdges(c)
	for _, cfg := range c.Configurations {
		if !cfg.Required {
			r.OptionalConfigurations = append(r.OptionalConfigurations, cfg.Name)
		}
	}
	r.Readiness = readinessOf(c.Readiness)
	if v := opts.Verdict; opts.Validate && v != nil {
		ok := v.Valid
		r.Valid = &ok
		r.Findings = slices.Clip(v.Findings) // shared: an append copies
	} else if opts.Validate {
		// The bundle's own decode of pacto.yaml is reused: each bundle
		// of a fleet is parsed once, not once to load and twice more to
		// validate.
		var res validate.Result
		if len(b.Raw) <= contract.MaxBytes {
			res = validate.ValidateBytes(ctx, b.Raw, b.FS, &validate.Options{Document: b.Document()})
		} else {
			res = validate.Validate(ctx, b.FS, nil) // refused with the reader's own message
		}
		ok := res.Valid()
		r.Valid = &ok
		for _, f := range res.Errors {
			if len(r.Findings) == maxFindings {
				break
			}
			r.Findings = append(r.Findings, Finding{Code: f.Code, Path: f.Path, Message: f.Message, Severity: "error"})
		}
	}
	return r, nil
}

// contractEdges are a contract's declared relationships: dependencies,
// then configuration and policy references, kept distinct.
func contractEdges(c *contract.Contract) []Edge {
	var out []Edge
	for _, d := range c.Dependencies {
		out = append(out, Edge{Type: EdgeDependency, Name: d.Name, Ref: d.Ref, Required: d.Required, Compatibility: d.Compatibility})
	}
	for _, cfg := range c.Configurations {
		if cfg.Ref != "" {
			out = append(out, Edge{Type: EdgeConfiguration, Name: cfg.Name, Ref: cfg.Ref})
		}
	}
	for _, p := range c.Policies {
		if p.Ref != "" {
			out = append(out, Edge{Type: EdgePolicy, Name: p.Name, Ref: p.Ref})
		}
	}
	return out
}

// readinessOf scores a readiness declaration: done claims earn their
// weight, partial ones weight × partialCredit (default 0.5), not-done
// nothing; deferred ones are left out. minScore defaults to 100.
func readinessOf(rd *contract.Readiness) *Readiness {
	if rd == nil {
		return nil
	}
	credit := 0.5
	if rd.PartialCredit != nil {
		credit = *rd.PartialCredit
	}
	var earned, total float64
	for _, c := range rd.Claims {
		w := float64(c.Weight)
		switch c.Status {
		case "done":
			earned += w
		case "partial":
			earned += w * credit
		case "deferred":
			continue
		}
		total += w
	}
	score := 0
	if total > 0 {
		score = int(math.Round(earned / total * 100))
	}
	minScore := 100
	if rd.MinScore != nil {
		minScore = *rd.MinScore
	}
	return &Readiness{Score: score, MinScore: minScore, Expires: rd.Expires}
}
