package fleetgraph

import (
	"fmt"
	"strings"

	"github.com/kubepact/kubepact/bundle/diff"
)

// maxHeadlineNames bounds the consumers one headline names per risk.
const maxHeadlineNames = 10

// Headline is the answer in one line, for an agent or a person who reads
// nothing else: the classification, what the version bump announces and
// whether the diff bears it out, and the consumers by risk — those at
// risk named first, then those to review, those that will not pick the
// version up until they widen their range, and those reached indirectly
// or of unknown exposure.
func (r *ImpactResult) Headline() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → %s is %s", r.Service, r.OldVersion, r.NewVersion, r.Classification)
	vb := r.VersionBump
	switch {
	case vb.BreakingWithoutMajor && vb.SuggestedVersion != "":
		fmt.Fprintf(&b, ", a breaking change without a major version bump (release it as %s)", vb.SuggestedVersion)
	case vb.BreakingWithoutMajor:
		b.WriteString(", a breaking change without a major version bump")
	case vb.AnnouncesBreaking && r.Classification == diff.Breaking:
		fmt.Fprintf(&b, ", announced by a %s version bump", vb.Kind)
	case vb.AnnouncesBreaking:
		fmt.Fprintf(&b, ", under a %s version bump", vb.Kind)
	case r.Classification == diff.PotentiallyBreaking && (vb.Kind == diff.BumpMinor || vb.Kind == diff.BumpPatch):
		fmt.Fprintf(&b, ", which its %s version bump does not announce", vb.Kind)
	case r.Classification == diff.NonBreaking && (vb.Kind == diff.BumpMinor || vb.Kind == diff.BumpPatch):
		fmt.Fprintf(&b, ", compatible as its %s version bump announces", vb.Kind)
	}
	fmt.Fprintf(&b, ": %d breaking change(s)", contractChanges(r.BreakingChanges))
	if n := contractChanges(r.PotentiallyBreakingChanges); n > 0 {
		fmt.Fprintf(&b, ", %d potentially breaking", n)
	}
	switch {
	case !r.InFleet:
		fmt.Fprintf(&b, "; %s is not in the fleet snapshot, so no consumer can be named", r.Service)
		return b.String() + "."
	case r.TotalConsumers == 0:
		b.WriteString("; no consumer in the fleet snapshot depends on it")
		return b.String() + "."
	}
	// Counts are the whole answer's; names come from this page.
	byRisk := map[string][]string{}
	for _, c := range r.Consumers {
		byRisk[c.Risk] = append(byRisk[c.Risk], c.Service)
	}
	if n := r.ConsumersByRisk[RiskAtRisk]; n > 0 {
		fmt.Fprintf(&b, "; %d of %d consumer(s) AT RISK, their range admits %s: %s", n, r.TotalConsumers, r.NewVersion, names(byRisk[RiskAtRisk], n))
	} else {
		fmt.Fprintf(&b, "; 0 of %d consumer(s) at risk", r.TotalConsumers)
	}
	for _, g := range []struct{ risk, says string }{
		{RiskReview, "to review, their range admits it and some change may break them"},
		{RiskExcluded, "will not pick it up until they widen their range"},
		{RiskIndirect, "depend indirectly on those at risk or to review"},
		{RiskUnknown, "of unknown exposure (no usable range, or reached through one)"},
	} {
		if n := r.ConsumersByRisk[g.risk]; n > 0 {
			fmt.Fprintf(&b, "; %d %s", n, g.says)
			if ns := byRisk[g.risk]; len(ns) > 0 {
				fmt.Fprintf(&b, ": %s", names(ns, n))
			}
		}
	}
	if n := r.ConsumersByRisk[RiskUnaffected]; n > 0 {
		fmt.Fprintf(&b, "; %d unaffected", n)
	}
	if r.NextCursor != "" {
		fmt.Fprintf(&b, "; this answer lists %d consumer(s), the most affected first, and leaves %d out to stay within its byte budget: repeat the call with cursor set to nextCursor for them", len(r.Consumers), r.RemainingConsumers)
	}
	return b.String() + "."
}

// names lists at most maxHeadlineNames of ns, then how many more of total.
func names(ns []string, total int) string {
	shown := ns[:min(len(ns), maxHeadlineNames)]
	out := strings.Join(shown, ", ")
	if total > len(shown) {
		out += fmt.Sprintf(" and %d more", total-len(shown))
	}
	return out
}
