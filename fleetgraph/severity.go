package fleetgraph

import (
	"slices"
	"strconv"
	"strings"
)

// Codes of evidence findings about one assertion of the contract. Pacto
// 2.0 grades them by the assertion's required-ness: an error when the
// contract declares the dependency or configuration required, a warning
// when it declares it required: false.
const (
	CodeDependencyUnreachable = "DEPENDENCY_UNREACHABLE"
	CodeConfigurationAbsent   = "CONFIGURATION_ABSENT"
	CodeConfigurationMismatch = "CONFIGURATION_MISMATCH"
)

// Finding severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// gradedFindings returns a target's findings with the severity Pacto 2.0
// gives them against rev, the revision the target is linked to: a finding
// on an assertion rev declares required: false is a warning, whatever
// severity the evidence wrote. Without a linked revision the evidence's
// severity stands: nothing says the assertion is optional. The target's
// own findings are not changed.
func gradedFindings(fs []Finding, rev *Revision) []Finding {
	out := slices.Clone(fs)
	if rev == nil {
		return out
	}
	for i, f := range out {
		if optionalAssertion(f, rev) {
			out[i].Severity = SeverityWarning
		}
	}
	return out
}

// optionalAssertion reports whether f is one of the required-ness graded
// codes about a dependency or configuration that rev declares required:
// false. The assertion is named by subjectName, else by the finding's
// contract path (dependencies[2], configurations[0].ref).
func optionalAssertion(f Finding, rev *Revision) bool {
	var section string
	switch f.Code {
	case CodeDependencyUnreachable:
		section = "dependencies"
	case CodeConfigurationAbsent, CodeConfigurationMismatch:
		section = "configurations"
	default:
		return false
	}
	name := f.SubjectName
	idx := -1
	if name == "" {
		idx = pathIndex(f.Path, section)
		if idx < 0 {
			return false
		}
	}
	if section == "dependencies" {
		n := 0
		for _, e := range rev.Edges {
			if e.Type != EdgeDependency {
				continue
			}
			if (name != "" && e.Name == name) || (name == "" && n == idx) {
				return !e.Required
			}
			n++
		}
		return false
	}
	if name == "" {
		return false // configurations are known by name only
	}
	return slices.Contains(rev.OptionalConfigurations, name)
}

// pathIndex is i when path is section[i] or starts with section[i]., else -1.
func pathIndex(path, section string) int {
	rest, ok := strings.CutPrefix(path, section+"[")
	if !ok {
		return -1
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return -1
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil || i < 0 || (end+1 < len(rest) && rest[end+1] != '.') {
		return -1
	}
	return i
}

// Limitation codes Pacto 2.0 added for revisions that two sources deliver
// differently. A revision key is content-addressed (service and digest),
// so two sources never disagree about the contract body behind it; what
// they can disagree about is the rest of what they read.
const (
	// LimitRevisionDocumentConflict: two sources delivered one revision
	// key with different documents (what each derived from it differs:
	// version, owner, edges, findings). The snapshot keeps one of them
	// chosen by content, not by which source finished first, and marks
	// both sources partial.
	LimitRevisionDocumentConflict = "REVISION_DOCUMENT_CONFLICT"
	// LimitRevisionLockConflict: two sources disagree about one
	// revision's pacto.lock pins. kubepact resolves edges from the
	// contract's references and never reads pacto.lock, so it holds no
	// pins to contest and does not emit this code; it is defined so an
	// answer relayed from Pacto is understood.
	LimitRevisionLockConflict = "REVISION_LOCK_CONFLICT"

	// LimitRevisionContentConflict is Pacto's older name for a revision
	// key pinned to two contract bodies, which a content-addressed key
	// rules out.
	//
	// Deprecated: Pacto 2.0 emits REVISION_DOCUMENT_CONFLICT or
	// REVISION_LOCK_CONFLICT instead; kubepact never emitted it.
	LimitRevisionContentConflict = "REVISION_CONTENT_CONFLICT"
	// LimitRevisionContentMutable is Pacto's older code for a revision
	// resolved through a tag or a path.
	//
	// Deprecated: REVISION_IDENTITY_UNRESOLVED says it where the identity
	// is derived; kubepact never emitted it.
	LimitRevisionContentMutable = "REVISION_CONTENT_MUTABLE"
)
