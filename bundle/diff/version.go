package diff

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
)

// Version bump kinds: how service.version moves between two revisions.
const (
	BumpMajor      = "major"      // the major version grows (or, below 1.0.0, the minor)
	BumpMinor      = "minor"      // the minor version grows
	BumpPatch      = "patch"      // only the patch version grows
	BumpPrerelease = "prerelease" // the same release, another prerelease or the release itself
	BumpNone       = "none"       // the version is unchanged
	BumpDowngrade  = "downgrade"  // the version goes backwards
	BumpNotSemver  = "not-semver" // one side is not a semantic version
)

const versionPath = "service.version"

// Bump is a version change judged against the changes it ships with: the
// question a consumer's range asks ("may I take it?") answered by what
// the revision really changes, not only by what its number announces.
type Bump struct {
	Kind string `json:"kind"`
	// AnnouncesBreaking says the new version tells consumers to expect
	// incompatible changes: a major bump; below 1.0.0 a minor bump (a
	// caret range, ^0.3.0, stops before 0.4.0); a move from a prerelease,
	// which promises nothing.
	AnnouncesBreaking bool `json:"announcesBreaking"`
	// BreakingWithoutMajor is true when some change is BREAKING and the
	// version does not announce it: every consumer whose range admits the
	// new version will take a breaking change.
	BreakingWithoutMajor bool `json:"breakingWithoutMajor"`
	// SuggestedVersion is the version that would announce the breaking
	// changes (the next major), set with BreakingWithoutMajor.
	SuggestedVersion string `json:"suggestedVersion,omitempty"`
	// Message says, in a sentence, what the bump announces and whether the
	// changes bear it out.
	Message string `json:"message"`
}

// JudgeBump classifies the move from version o to n and judges it against
// changes (a diff; its own service.version entry is not counted).
func JudgeBump(o, n string, changes []Change) Bump {
	breaking, potential := 0, 0
	for _, c := range changes {
		if c.Path == versionPath {
			continue
		}
		switch c.Classification {
		case Breaking:
			breaking++
		case PotentiallyBreaking:
			potential++
		}
	}
	ov, err1 := semver.NewVersion(o)
	nv, err2 := semver.NewVersion(n)
	if err1 != nil || err2 != nil {
		b := Bump{Kind: BumpNotSemver, Message: fmt.Sprintf("the version %s → %s is not semantic versioning, so no consumer's range can judge it", o, n)}
		if o == n {
			b.Kind = BumpNone
		}
		if breaking > 0 {
			b.BreakingWithoutMajor = true
			b.Message = fmt.Sprintf("breaking change without a major version bump: %d change(s) are breaking, and the version %s → %s is not semantic versioning, so it cannot announce them", breaking, o, n)
		}
		return b
	}
	b := Bump{Kind: bumpKind(ov, nv)}
	b.AnnouncesBreaking = b.Kind == BumpMajor || b.Kind == BumpPrerelease
	what := fmt.Sprintf("%s → %s is a %s version bump", o, n, b.Kind)
	switch b.Kind {
	case BumpNone:
		what = fmt.Sprintf("the version stays %s", n)
		if o != n {
			what = fmt.Sprintf("the version stays %s (written %s before)", n, o)
		}
	case BumpPrerelease:
		what = fmt.Sprintf("%s → %s moves from a prerelease, which promises no compatibility", o, n)
	case BumpDowngrade:
		what = fmt.Sprintf("the version goes backwards (%s → %s)", o, n)
	case BumpMajor:
		if nv.Major() == ov.Major() {
			what = fmt.Sprintf("%s → %s is a minor version bump below 1.0.0, which semantic versioning treats as major", o, n)
		}
	}
	switch {
	case breaking > 0 && !b.AnnouncesBreaking:
		b.BreakingWithoutMajor = true
		b.SuggestedVersion = nextMajor(ov, nv)
		b.Message = fmt.Sprintf("breaking change without a major version bump: %s, which tells every consumer whose range admits %s that it is safe to take, but %d change(s) are breaking; release it as %s, or undo the breaking changes", what, n, breaking, b.SuggestedVersion)
	case b.AnnouncesBreaking && breaking > 0:
		b.Message = fmt.Sprintf("%s, which announces the %d breaking change(s): consumers whose range stops below %s will not pick it up until they widen their range", what, breaking, n)
	case b.AnnouncesBreaking:
		b.Message = fmt.Sprintf("%s, which announces incompatible changes although none is found: consumers whose range stops below %s will not pick it up until they widen their range", what, n)
	case b.Kind == BumpDowngrade:
		b.Message = what + ": consumers whose range admits only newer versions will not take it"
	case b.Kind == BumpNone && potential > 0:
		b.Message = fmt.Sprintf("%s although %d change(s) may break consumers and cannot be judged here: review them, and release a changed contract under a new version", what, potential)
	case potential > 0:
		b.Message = fmt.Sprintf("%s, which announces compatible changes, but %d change(s) may break consumers and cannot be judged here: review them before consumers whose range admits %s take it", what, potential, n)
	case b.Kind == BumpNone:
		b.Message = what + ", and no change is breaking"
	default:
		b.Message = what + ", and no change is breaking: compatible, as it announces"
	}
	return b
}

func bumpKind(ov, nv *semver.Version) string {
	switch {
	case nv.Equal(ov):
		return BumpNone
	case nv.LessThan(ov):
		return BumpDowngrade
	case nv.Major() > ov.Major():
		return BumpMajor
	case nv.Minor() > ov.Minor():
		if ov.Major() == 0 {
			return BumpMajor
		}
		return BumpMinor
	case nv.Patch() > ov.Patch():
		return BumpPatch
	}
	return BumpPrerelease
}

// nextMajor is the smallest version after both o and n that announces
// breaking changes: the next major, or below 1.0.0 the next minor.
func nextMajor(o, n *semver.Version) string {
	v := n
	if o.GreaterThan(n) {
		v = o
	}
	if v.Major() == 0 {
		return fmt.Sprintf("0.%d.0", v.Minor()+1)
	}
	return fmt.Sprintf("%d.0.0", v.Major()+1)
}

// versionChange is the service.version entry of a diff: the bump judged
// against the other changes. A changed version is always listed; an
// unchanged one only when the revision breaks consumers under it.
func versionChange(o, n string, others []Change) (Change, bool) {
	b := JudgeBump(o, n, others)
	c := Change{Path: versionPath, Kind: "changed", Message: b.Message, Old: o, New: n}
	switch {
	case b.BreakingWithoutMajor:
		c.Classification = Breaking
	case b.AnnouncesBreaking, b.Kind == BumpDowngrade, b.Kind == BumpNotSemver:
		c.Classification = PotentiallyBreaking
	case b.Kind == BumpNone && o == n:
		return Change{}, false
	case Classification(others) == PotentiallyBreaking:
		c.Classification = PotentiallyBreaking
	default:
		c.Classification = NonBreaking
	}
	if o == n {
		c.Kind = "unchanged"
	}
	return c, true
}
