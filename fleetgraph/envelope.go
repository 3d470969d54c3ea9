package fleetgraph

import (
	"cmp"
	"errors"
	"time"

	"github.com/kubepact/kubepact/bundle/failure"
	"github.com/kubepact/kubepact/bundle/oci"
)

// SchemaVersion is the fleet answers' schema, Pacto's.
const SchemaVersion = "pacto.dev/fleet/v1"

// Completeness of a snapshot.
const (
	CompletenessComplete = "complete" // every source available and current
	CompletenessPartial  = "partial"  // some source is degraded or none is configured
	CompletenessEmpty    = "empty"    // every source available, and no records
)

// Source statuses.
const (
	SourceAvailable   = "available"
	SourcePartial     = "partial"
	SourceStale       = "stale"
	SourceUnavailable = "unavailable"
)

// Sanitised source error codes: the only codes an answer shows; the full
// error stays in the server log. A failure to reach or read a source or a
// bundle is coded by bundle/failure (SanitizeError), in the same words as
// the catalog and `kubepact check -o json`; these name the common ones.
const (
	ErrAuthFailed  = failure.CodeAuthFailed
	ErrNotFound    = failure.CodeNotFound
	ErrUnavailable = failure.CodeUnavailable
	ErrCancelled   = failure.CodeCancelled
	ErrInvalid     = "INVALID" // a source file that does not parse; its message says where
	// ErrNotAllowed: the registry policy refused the registry (or where
	// it sent the request); its message names the flag that would allow it.
	ErrNotAllowed = failure.CodeNotAllowed
)

// Limitation codes.
const (
	LimitNoSources          = "NO_SOURCES_CONFIGURED"
	LimitSourceUnavailable  = "SOURCE_UNAVAILABLE"
	LimitSourceStale        = "SOURCE_STALE"
	LimitSourcePartial      = "SOURCE_PARTIAL"
	LimitUnresolvedDep      = "UNRESOLVED_DEPENDENCY"
	LimitEvidenceMissing    = "EVIDENCE_MISSING"
	LimitRecordInvalid      = "SOURCE_RECORD_INVALID"
	LimitDuplicateSourceID  = "DUPLICATE_SOURCE_ID"
	LimitIdentityUnresolved = "REVISION_IDENTITY_UNRESOLVED"
	LimitLinkAmbiguous      = "REVISION_LINK_AMBIGUOUS"
	LimitTargetRefConflict  = "TARGET_REFERENCE_CONFLICT"
	LimitServiceNotInFleet  = "SERVICE_NOT_IN_FLEET"
	LimitResultTruncated    = "RESULT_TRUNCATED"
	// LimitObservedUnavailable: observed (traced) edges were asked for and
	// no observed-edge source is configured.
	LimitObservedUnavailable = "OBSERVED_EDGES_UNAVAILABLE"
	// LimitNoVisibleScope: the reader may see no scope that holds a record
	// (Visibility, NoScopes), so the answer shows nothing whatever the
	// fleet holds.
	LimitNoVisibleScope = "NO_VISIBLE_SCOPE"
)

// Caps on the envelope's lists.
const (
	maxLimitations = 100
	maxSources     = 50
)

// SourceError is a source failure as answers show it: a sanitised code
// and a message that names no credential.
type SourceError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// SourceState is what a source last reported.
type SourceState struct {
	ID                 string       `json:"id"`
	Kind               string       `json:"kind"`
	Status             string       `json:"status"`
	LastSuccessfulSync time.Time    `json:"lastSuccessfulSync,omitzero"`
	ObservedAt         time.Time    `json:"observedAt,omitzero"`
	Error              *SourceError `json:"error,omitempty"`
	RevisionCount      int          `json:"revisionCount"`
	TargetCount        int          `json:"targetCount"`
}

// Limitation says why an answer may be incomplete.
type Limitation struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Source  string `json:"source,omitempty"`
	Subject string `json:"subject,omitempty"`
	// Scope is the namespace the limitation is about. A restricted view
	// (Snapshot.Restrict) shows it only when it sees the scope; one with
	// a Subject but no Scope is shown only to unrestricted readers, unless
	// it is ClusterWide.
	Scope string `json:"scope,omitempty"`
	// ClusterWide marks a limitation about the source as a whole (an API
	// server that cannot be reached, a resource that cannot be watched in
	// any namespace, a CRD that is not installed): it names no namespace
	// and reveals nothing about one, so every reader is shown it, Subject
	// or not. It never carries a Scope.
	ClusterWide bool `json:"clusterWide,omitempty"`
}

// visibleTo reports whether a reader with visibility v is shown l.
func (l Limitation) visibleTo(v Visibility) bool {
	switch {
	case v.all:
		return true
	case l.Scope != "":
		return v.Sees(l.Scope)
	}
	return l.Subject == "" || l.ClusterWide
}

// Meta is the completeness envelope on every fleet answer.
type Meta struct {
	SchemaVersion        string        `json:"schemaVersion"`
	SnapshotID           string        `json:"snapshotId"`
	AsOf                 time.Time     `json:"asOf"`
	Completeness         string        `json:"completeness"`
	Limitations          []Limitation  `json:"limitations"`
	LimitationsTruncated bool          `json:"limitationsTruncated,omitempty"`
	Sources              []SourceState `json:"sources"`
	SourcesTruncated     bool          `json:"sourcesTruncated,omitempty"`
}

// meta builds the envelope of an answer: the snapshot's source-level
// limitations first, then the answer's own, capped.
func (s *Snapshot) meta(extra []Limitation) Meta {
	m := Meta{
		SchemaVersion: SchemaVersion,
		SnapshotID:    s.id,
		AsOf:          s.asOf,
		Completeness:  s.completeness,
		Limitations:   make([]Limitation, 0, len(s.limitations)+len(extra)),
		Sources:       cloneSources(s.sources),
	}
	m.Limitations = append(append(m.Limitations, s.limitations...), extra...)
	if len(m.Limitations) > maxLimitations {
		m.Limitations, m.LimitationsTruncated = m.Limitations[:maxLimitations], true
	}
	if len(m.Sources) > maxSources {
		m.Sources, m.SourcesTruncated = m.Sources[:maxSources], true
	}
	return m
}

// clone returns st with its own copy of the error, so a copy handed out
// cannot write into a published snapshot.
func (st SourceState) clone() SourceState {
	if st.Error != nil {
		e := *st.Error
		st.Error = &e
	}
	return st
}

func cloneSources(in []SourceState) []SourceState {
	out := make([]SourceState, len(in))
	for i, st := range in {
		out[i] = st.clone()
	}
	return out
}

// SanitizeError maps a source failure to a code answers may show:
// bundle/failure's Kind of it, read from the error's type (never its
// text), with a message of ours. A feed whose errors are of another kind
// (the Kubernetes API's) classifies them itself and uses SourceErrorOf.
func SanitizeError(err error) *SourceError {
	if err == nil {
		return nil
	}
	kind := failure.Classify(err)
	if re, ok := errors.AsType[*oci.RegistryError](err); ok {
		// A registry failure says what went wrong in its own sentence,
		// which never carries a transport's or a registry's text.
		return &SourceError{Code: kind.Code(), Message: re.Error()}
	}
	return SourceErrorOf(kind)
}

// SourceErrorOf is the source error of a failure of kind k: its code and
// the sentence answers show for it.
func SourceErrorOf(k failure.Kind) *SourceError {
	return &SourceError{Code: k.Code(), Message: cmp.Or(sourceMessages[k], sourceMessages[failure.Unavailable])}
}

// sourceMessages say each kind of source failure.
var sourceMessages = map[failure.Kind]string{
	failure.Unavailable:      "the source could not be read",
	failure.NotFound:         "the source names something that does not exist",
	failure.AuthFailed:       "the source refused access",
	failure.Cancelled:        "the source did not answer in time",
	failure.NotAllowed:       "the registry policy refused the registry; nothing was sent to it",
	failure.InvalidReference: "the source names a reference that is not valid",
	failure.Unreadable:       "the source holds something that is not a readable Pacto bundle",
	failure.TooLarge:         "the bundle is larger than the limits allow",
	failure.Unsafe:           "the bundle holds a link, a device or a path leaving it",
}

// sourceLimitations turns degraded sources into limitations and decides the
// completeness.
func sourceLimitations(sources []SourceState, records int) (string, []Limitation) {
	if len(sources) == 0 {
		return CompletenessPartial, []Limitation{{Code: LimitNoSources, Message: "no fleet source is configured: absence of a record proves nothing"}}
	}
	var lims []Limitation
	for _, st := range sources {
		switch st.Status {
		case SourceUnavailable:
			msg := "source " + st.ID + " is unavailable: its records are missing, not absent"
			if st.Error != nil {
				msg += " (" + st.Error.Code + ": " + st.Error.Message + ")"
			}
			lims = append(lims, Limitation{Code: LimitSourceUnavailable, Message: msg, Source: st.ID})
		case SourceStale:
			lims = append(lims, Limitation{Code: LimitSourceStale, Message: "source " + st.ID + " has not synced within the freshness window", Source: st.ID})
		case SourcePartial:
			msg := "source " + st.ID + " returned part of its records"
			if st.Error != nil {
				msg += " (" + st.Error.Code + ": " + st.Error.Message + ")"
			}
			lims = append(lims, Limitation{Code: LimitSourcePartial, Message: msg, Source: st.ID})
		}
	}
	switch {
	case len(lims) > 0:
		return CompletenessPartial, lims
	case records == 0:
		return CompletenessEmpty, nil
	default:
		return CompletenessComplete, nil
	}
}
