package fleetgraph

import (
	"slices"
	"strings"
	"time"
)

// Attention categories.
const (
	CategoryNonCompliant     = "non_compliant"
	CategoryUnknown          = "unknown"
	CategoryStale            = "stale"
	CategoryInvalid          = "invalid"
	CategoryMissingReadiness = "missing_readiness"
	CategoryUnresolvedDeps   = "unresolved_deps"
)

// Categories lists every attention category; needs_attention means all.
func Categories() []string {
	return []string{CategoryInvalid, CategoryNonCompliant, CategoryUnknown, CategoryStale, CategoryMissingReadiness, CategoryUnresolvedDeps}
}

// Status item codes.
const (
	CodeNonCompliant     = "NON_COMPLIANT"
	CodeUnknown          = "UNKNOWN"
	CodeStaleEvidence    = "STALE_EVIDENCE"
	CodeInvalidContract  = "INVALID_CONTRACT"
	CodeMissingReadiness = "MISSING_READINESS"
	CodeUnresolvedDep    = "UNRESOLVED_DEPENDENCY"
)

// StatusQuery selects attention categories; none selected means
// needs_attention (all of them).
type StatusQuery struct {
	NeedsAttention   bool   `json:"needs_attention,omitempty"`
	NonCompliant     bool   `json:"non_compliant,omitempty"`
	Unknown          bool   `json:"unknown,omitempty"`
	Invalid          bool   `json:"invalid,omitempty"`
	Stale            bool   `json:"stale,omitempty"`
	MissingReadiness bool   `json:"missing_readiness,omitempty"`
	UnresolvedDeps   bool   `json:"unresolved_deps,omitempty"`
	Limit            int    `json:"limit,omitempty"`
	Cursor           string `json:"cursor,omitempty"`
}

// StatusItem is one thing that needs attention.
type StatusItem struct {
	Kind    string `json:"kind"` // target, revision or relationship
	Name    string `json:"name"`
	Service string `json:"service"`
	Code    string `json:"code"`
	Reason  string `json:"reason"`
}

// StatusResult is pacto_fleet_status's answer.
type StatusResult struct {
	Meta       Meta         `json:"meta"`
	Categories []string     `json:"categories"`
	Total      int          `json:"total"`
	Count      int          `json:"count"`
	Items      []StatusItem `json:"items"`
	NextCursor string       `json:"nextCursor,omitempty"`
	Truncated  bool         `json:"truncated"`
}

func (q StatusQuery) categories() []string {
	sel := map[string]bool{
		CategoryNonCompliant: q.NonCompliant, CategoryUnknown: q.Unknown, CategoryInvalid: q.Invalid,
		CategoryStale: q.Stale, CategoryMissingReadiness: q.MissingReadiness, CategoryUnresolvedDeps: q.UnresolvedDeps,
	}
	var out []string
	for _, c := range Categories() {
		if q.NeedsAttention || sel[c] {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return Categories()
	}
	return out
}

// Status lists what needs attention in the selected categories, sorted by
// code then name, a page at a time.
func (s *Snapshot) Status(q StatusQuery) (*StatusResult, error) {
	if q.Limit < 0 || q.Limit > MaxStatusLimit {
		return nil, invalid("limit", "limit %d: want 1..%d", q.Limit, MaxStatusLimit)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultStatusLimit
	}
	cats := q.categories()
	filter := filterHash(cats)
	offset := 0
	if q.Cursor != "" {
		c, err := s.checkCursor(q.Cursor, filter)
		if err != nil {
			return nil, err
		}
		offset = c.Offset
	}
	on := func(c string) bool { return slices.Contains(cats, c) }
	var items []StatusItem
	if on(CategoryNonCompliant) || on(CategoryUnknown) || on(CategoryStale) {
		for k, e := range s.targets.all() {
			t := e.Target
			sk := t.ServiceKey()
			switch t.compliance() {
			case StatusNonCompliant:
				if on(CategoryNonCompliant) {
					items = append(items, StatusItem{Kind: "target", Name: k, Service: sk, Code: CodeNonCompliant, Reason: firstFinding(t, "evidence shows the target does not meet its contract")})
				}
			case StatusUnknown:
				if on(CategoryUnknown) {
					items = append(items, StatusItem{Kind: "target", Name: k, Service: sk, Code: CodeUnknown, Reason: unknownReason(t)})
				}
			}
			if on(CategoryStale) && s.stale(t) {
				items = append(items, StatusItem{Kind: "target", Name: k, Service: sk, Code: CodeStaleEvidence,
					Reason: "evidence from " + t.EvidenceAt.UTC().Format(time.RFC3339) + " is older than the freshness window " + s.freshness.String()})
			}
		}
	}
	if on(CategoryInvalid) || on(CategoryMissingReadiness) || on(CategoryUnresolvedDeps) {
		for k, e := range s.revisions.all() {
			r := e.Revision
			sk := r.ServiceKey()
			if on(CategoryInvalid) && r.Valid != nil && !*r.Valid {
				items = append(items, StatusItem{Kind: "revision", Name: k, Service: sk, Code: CodeInvalidContract, Reason: revisionFindings(r)})
			}
			if on(CategoryMissingReadiness) && r.Readiness == nil {
				items = append(items, StatusItem{Kind: "revision", Name: k, Service: sk, Code: CodeMissingReadiness, Reason: "the contract declares no readiness"})
			}
			if on(CategoryUnresolvedDeps) {
				for _, edge := range r.Edges {
					if rel := s.resolve(r, edge); !rel.Resolved {
						items = append(items, StatusItem{Kind: "relationship", Name: k + " → " + edge.Ref, Service: sk, Code: CodeUnresolvedDep, Reason: rel.Reason})
					}
				}
			}
		}
	}
	slices.SortFunc(items, func(a, b StatusItem) int {
		if c := strings.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	res := &StatusResult{Meta: s.meta(nil), Categories: cats, Total: len(items), Items: []StatusItem{}}
	if offset < len(items) {
		end := min(len(items), offset+limit)
		res.Items = append(res.Items, items[offset:end]...)
		if end < len(items) {
			res.Truncated = true
			res.NextCursor = encodeCursor(cursor{Snapshot: s.id, Filter: filter, Offset: end})
		}
	}
	res.Count = len(res.Items)
	return res, nil
}

func firstFinding(t *Target, fallback string) string {
	for _, f := range t.Findings {
		if f.Message != "" {
			return f.Code + ": " + f.Message
		}
	}
	return fallback
}

func unknownReason(t *Target) string {
	if t.EvidenceAt.IsZero() {
		return "no evidence was collected for this target"
	}
	if t.Coverage != nil && t.Coverage.Evaluated < t.Coverage.Required {
		return "evidence covers too few assertions to decide"
	}
	return "the evidence is insufficient to decide"
}

func revisionFindings(r *Revision) string {
	for _, f := range r.Findings {
		return f.Code + ": " + f.Message
	}
	return "the contract did not validate"
}

// ExplainQuery names a service (key or name) or a target (key or name).
type ExplainQuery struct {
	Subject string `json:"subject"`
}

// Assertion is what a finding is about.
type Assertion struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Reason is one cause of a subject's status.
type Reason struct {
	Code       string     `json:"code"`
	Message    string     `json:"message"`
	Subject    string     `json:"subject,omitempty"`
	Assertion  *Assertion `json:"assertion,omitempty"`
	Source     string     `json:"source,omitempty"`
	ObservedAt *time.Time `json:"observedAt,omitempty"`
}

// ExplainResult is pacto_fleet_explain's answer.
type ExplainResult struct {
	Meta Meta `json:"meta"`
	Miss
	Subject string   `json:"subject"`
	Kind    string   `json:"kind,omitempty"`
	Key     string   `json:"key,omitempty"`
	Status  Status   `json:"status,omitempty"`
	Reasons []Reason `json:"reasons"`
}

// Explain says why a service or target has its status.
func (s *Snapshot) Explain(q ExplainQuery) (*ExplainResult, error) {
	if q.Subject == "" {
		return nil, invalid("subject", "subject is required: a service name or key, or a target name or key")
	}
	res := &ExplainResult{Subject: q.Subject, Reasons: []Reason{}}
	if sv, _ := s.findService(q.Subject); sv != nil {
		res.Found, res.Kind, res.Key, res.Status = true, "service", sv.key, sv.status
		s.explainService(sv, res)
		res.Meta = s.meta(nil)
		return res, nil
	}
	if t, _ := s.findTarget(q.Subject); t != nil {
		res.Found, res.Kind, res.Key, res.Status = true, "target", t.Key(), t.compliance()
		res.Reasons = s.targetReasons(t)
		res.Meta = s.meta(nil)
		return res, nil
	}
	res.Reason = "no service or target named " + q.Subject + " is in the fleet snapshot"
	cands := append(s.suggestServices(q.Subject), s.suggestTargets(q.Subject)...)
	if len(cands) > maxCandidates {
		cands = cands[:maxCandidates]
	}
	res.Candidates = cands
	res.Meta = s.meta(nil)
	return res, nil
}

func (s *Snapshot) explainService(sv *service, res *ExplainResult) {
	if len(sv.targets) == 0 {
		res.Reasons = append(res.Reasons, Reason{Code: string(StatusNotEvaluated), Message: "no target runs this service, so nothing was evaluated"})
	}
	for _, k := range sv.targets {
		t := s.target(k)
		if t.compliance() == sv.status && sv.status != StatusCompliant {
			for _, r := range s.targetReasons(t) {
				r.Subject = k
				res.Reasons = append(res.Reasons, r)
			}
		} else if s.stale(t) {
			res.Reasons = append(res.Reasons, Reason{Code: LimitSourceStale, Subject: k, Message: "evidence is older than the freshness window", Source: t.Source, ObservedAt: timePtr(t.EvidenceAt)})
		}
	}
	if len(sv.owners) > 1 {
		res.Reasons = append(res.Reasons, Reason{Code: "OWNER_CONFLICT", Message: "revisions name different owners: " + strings.Join(sv.owners, ", ")})
	}
	for _, k := range sv.revisions {
		r := s.revision(k)
		if r.Valid != nil && !*r.Valid {
			res.Reasons = append(res.Reasons, Reason{Code: CodeInvalidContract, Subject: k, Message: revisionFindings(r), Source: r.Source})
		}
		for _, e := range r.Edges {
			if rel := s.resolve(r, e); !rel.Resolved {
				res.Reasons = append(res.Reasons, Reason{Code: CodeUnresolvedDep, Subject: k, Message: e.Ref + ": " + rel.Reason, Source: r.Source})
			}
		}
	}
}

func (s *Snapshot) targetReasons(t *Target) []Reason {
	out := []Reason{}
	for _, f := range t.Findings {
		r := Reason{Code: f.Code, Message: f.Message, Source: t.Source, ObservedAt: timePtr(t.EvidenceAt)}
		if f.SubjectKind != "" || f.SubjectName != "" {
			r.Assertion = &Assertion{Kind: f.SubjectKind, Name: f.SubjectName}
		}
		out = append(out, r)
	}
	if t.compliance() == StatusUnknown && t.EvidenceAt.IsZero() {
		out = append(out, Reason{Code: LimitEvidenceMissing, Message: "no evidence was collected for this target: Unknown means undecided, not failing", Source: t.Source})
	}
	if s.stale(t) {
		out = append(out, Reason{Code: LimitSourceStale, Message: "evidence is older than the freshness window " + s.freshness.String(), Source: t.Source, ObservedAt: timePtr(t.EvidenceAt)})
	}
	if _, state, why := s.link(t); state != LinkExact && state != LinkInferred {
		out = append(out, Reason{Code: linkLimitation(TargetView{RevisionMatch: state, LinkReason: why}).Code, Message: "not linked to a contract revision: " + why, Source: t.Source})
	}
	if len(out) == 0 {
		out = append(out, Reason{Code: string(t.compliance()), Message: "evidence reports " + string(t.compliance()), Source: t.Source, ObservedAt: timePtr(t.EvidenceAt)})
	}
	return out
}
