package fleetgraph

import (
	"context"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/diff"
)

// ImpactSchema is the impact answer's schema, Pacto's.
const ImpactSchema = "pacto.dev/impact/v1"

// Compatibility verdicts and confidences.
const (
	VerdictCompatible   = "compatible"
	VerdictIncompatible = "incompatible"
	VerdictUnknown      = "unknown"

	ConfidenceContractual = "contractual" // a declared edge with a version range
	ConfidenceDeclared    = "declared"    // a declared edge without a range
	ConfidenceInferred    = "inferred"    // reached through another consumer
)

// ImpactOptions configure Impact.
type ImpactOptions struct {
	// Domain qualifies the changed service's name; empty looks it up by
	// the new contract's name (unique across domains) or the old one's.
	Domain string
	// MaxConsumers bounds the consumers listed (default 5000); the answer
	// carries RESULT_TRUNCATED only when more exist.
	MaxConsumers int
	// IncludeObserved asks for observed (traced) caller edges next to the
	// declared ones. No observed-edge source exists yet, so the answer
	// carries an OBSERVED_EDGES_UNAVAILABLE limitation instead: a request
	// for evidence the server cannot give is never silently dropped.
	IncludeObserved bool
}

// Consumer is a service that depends, directly or transitively, on the
// changed service.
type Consumer struct {
	Service              string   `json:"service"`
	Domain               string   `json:"domain,omitempty"`
	Depth                int      `json:"depth"`
	Direct               bool     `json:"direct"`
	Path                 []string `json:"path"` // consumer first, the changed service last
	Owner                string   `json:"owner,omitempty"`
	Required             bool     `json:"required"`
	Compatibility        string   `json:"compatibility,omitempty"`
	CompatibilityVerdict string   `json:"compatibilityVerdict"`
	Provenance           string   `json:"provenance"`
	Confidence           string   `json:"confidence"`
	Status               Status   `json:"status"`
	Targets              []string `json:"targets"`
}

// ImpactResult is pacto_impact's answer.
type ImpactResult struct {
	SchemaVersion              string        `json:"schemaVersion"`
	Meta                       Meta          `json:"meta"`
	Service                    string        `json:"service"`
	InFleet                    bool          `json:"inFleet"`
	OldVersion                 string        `json:"oldVersion"`
	NewVersion                 string        `json:"newVersion"`
	Classification             string        `json:"classification"`
	BreakingChanges            []diff.Change `json:"breakingChanges"`
	PotentiallyBreakingChanges []diff.Change `json:"potentiallyBreakingChanges"`
	NonBreakingChanges         []diff.Change `json:"nonBreakingChanges"`
	Consumers                  []Consumer    `json:"consumers"`
	IncompatibleConsumers      int           `json:"incompatibleConsumers"`
	ActiveTargets              []string      `json:"activeTargets"`
	Owners                     []string      `json:"owners"`
}

// Impact diffs two revisions of a contract and projects the changes onto
// the snapshot: every service that depends on the changed one, with a
// verdict of the new version against each direct consumer's range. It
// stops with ctx's error when ctx ends (in the diff, or between the
// services the walk over dependents reaches).
func (s *Snapshot) Impact(ctx context.Context, older, newer *bundle.Bundle, opts *ImpactOptions) (*ImpactResult, error) {
	if opts == nil {
		opts = &ImpactOptions{}
	}
	maxConsumers := opts.MaxConsumers
	if maxConsumers <= 0 {
		maxConsumers = 5000
	}
	changes, err := diff.Diff(ctx, older, newer)
	if err != nil {
		return nil, err
	}
	res := &ImpactResult{
		SchemaVersion: ImpactSchema, OldVersion: older.Contract.Service.Version, NewVersion: newer.Contract.Service.Version,
		Classification: diff.Classification(changes), BreakingChanges: []diff.Change{}, PotentiallyBreakingChanges: []diff.Change{}, NonBreakingChanges: []diff.Change{},
		Consumers: []Consumer{}, ActiveTargets: []string{}, Owners: []string{},
	}
	for _, c := range changes {
		switch c.Classification {
		case diff.Breaking:
			res.BreakingChanges = append(res.BreakingChanges, c)
		case diff.PotentiallyBreaking:
			res.PotentiallyBreakingChanges = append(res.PotentiallyBreakingChanges, c)
		default:
			res.NonBreakingChanges = append(res.NonBreakingChanges, c)
		}
	}
	name := newer.Contract.Service.Name
	res.Service = ServiceKey(opts.Domain, name)
	sv := s.service(res.Service)
	if sv == nil && opts.Domain == "" {
		sv, _ = s.findService(name)
		if sv == nil {
			sv, _ = s.findService(older.Contract.Service.Name)
		}
	}
	var lims []Limitation
	if opts.IncludeObserved {
		lims = append(lims, Limitation{Code: LimitObservedUnavailable,
			Message: "observed edges were requested, but no observed-edge source is configured: consumers come from declared edges only, and a caller that declares nothing is not listed"})
	}
	if sv == nil {
		res.Meta = s.meta(append(lims, Limitation{Code: LimitServiceNotInFleet, Subject: res.Service,
			Message: "service " + res.Service + " is not in the fleet snapshot: no consumer can be named, which proves nothing about whether any exist"}))
		return res, nil
	}
	res.Service, res.InFleet = sv.key, true
	res.ActiveTargets = slices.Clone(sv.targets)
	if res.ActiveTargets == nil {
		res.ActiveTargets = []string{}
	}
	newVersion, verr := semver.NewVersion(res.NewVersion)

	// Breadth first over dependents: the first time a service is reached is
	// its shortest path.
	type node struct {
		sv   *service
		path []string // consumer first
	}
	seen := map[string]bool{sv.key: true}
	queue := []node{{sv: sv, path: []string{sv.key}}}
	owners := map[string]bool{}
	// truncated is set when a consumer is left out, not when the bound is
	// merely reached: with exactly maxConsumers consumers the walk goes on
	// until it finds another or runs out.
	truncated := false
	for len(queue) > 0 && !truncated {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cur := queue[0]
		queue = queue[1:]
		byConsumer := map[string][]Relationship{}
		for _, rel := range s.inbound(cur.sv) {
			if rel.Type == EdgeDependency {
				byConsumer[rel.FromService] = append(byConsumer[rel.FromService], rel)
			}
		}
		for _, ck := range slices.Sorted(mapsKeys(byConsumer)) {
			if seen[ck] {
				continue
			}
			if len(res.Consumers) >= maxConsumers {
				truncated = true
				break
			}
			seen[ck] = true
			csv := s.service(ck)
			path := append([]string{ck}, cur.path...)
			c := Consumer{Service: ck, Domain: csv.domain, Depth: len(path) - 1, Direct: len(path) == 2, Path: path,
				Provenance: "declared", Status: csv.status, Targets: slices.Clone(csv.targets)}
			if c.Targets == nil {
				c.Targets = []string{}
			}
			if len(csv.owners) > 0 {
				c.Owner = csv.owners[0]
				for _, o := range csv.owners {
					owners[o] = true
				}
			}
			var ranges []string
			for _, rel := range byConsumer[ck] {
				c.Required = c.Required || rel.Required
				if rel.Compatibility != "" && !slices.Contains(ranges, rel.Compatibility) {
					ranges = append(ranges, rel.Compatibility)
				}
			}
			c.Compatibility = strings.Join(ranges, " | ")
			switch {
			case !c.Direct:
				c.CompatibilityVerdict, c.Confidence = VerdictUnknown, ConfidenceInferred
			case len(ranges) == 0:
				c.CompatibilityVerdict, c.Confidence = VerdictUnknown, ConfidenceDeclared
			default:
				c.Confidence = ConfidenceContractual
				c.CompatibilityVerdict = verdict(newVersion, verr, ranges)
			}
			if c.CompatibilityVerdict == VerdictIncompatible {
				res.IncompatibleConsumers++
			}
			res.Consumers = append(res.Consumers, c)
			queue = append(queue, node{sv: csv, path: path})
		}
	}
	if truncated {
		lims = append(lims, Limitation{Code: LimitResultTruncated, Message: "the consumer list reached its bound: more consumers exist than it lists"})
	}
	res.Owners = slices.Sorted(mapsKeys(owners))
	if res.Owners == nil {
		res.Owners = []string{}
	}
	res.Meta = s.meta(lims)
	return res, nil
}

// verdict checks the new version against every range a consumer declares:
// incompatible when one excludes it, compatible when all admit it.
func verdict(v *semver.Version, verr error, ranges []string) string {
	if verr != nil {
		return VerdictUnknown
	}
	out := VerdictCompatible
	for _, r := range ranges {
		c, err := semver.NewConstraint(r)
		if err != nil {
			out = VerdictUnknown
			continue
		}
		if !c.Check(v) {
			return VerdictIncompatible
		}
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
