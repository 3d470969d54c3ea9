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
	// MaxBytes is the answer's byte budget (0: DefaultMaxBytes): a page
	// ends at Limit items or at the budget, whichever comes first.
	MaxBytes int `json:"max_bytes,omitempty"`
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
	Meta       Meta     `json:"meta"`
	Categories []string `json:"categories"`
	Total      int      `json:"total"`
	// ByCode counts every item of the listing (not only this page's) per
	// code.
	ByCode     map[string]int `json:"byCode"`
	Count      int            `json:"count"`
	Items      []StatusItem   `json:"items"`
	NextCursor string         `json:"nextCursor,omitempty"`
	Truncated  bool           `json:"truncated"`
	// Observed reconciles declared dependencies with observed (traced)
	// edges; absent when no observed-edge source is configured.
	Observed *ObservedStatus `json:"observed,omitempty"`
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

// attnCode indexes a snapshot's attention lists, in the order of their
// codes, which is the order Status lists items in.
type attnCode int

const (
	attnInvalid attnCode = iota
	attnMissingReadiness
	attnNonCompliant
	attnStale
	attnUnknown
	attnUnresolved
	nAttn
)

// attnKinds says, per attention list, its code, its category and the
// kind of record it lists.
var attnKinds = [nAttn]struct{ code, category, kind string }{
	attnInvalid:          {CodeInvalidContract, CategoryInvalid, "revision"},
	attnMissingReadiness: {CodeMissingReadiness, CategoryMissingReadiness, "revision"},
	attnNonCompliant:     {CodeNonCompliant, CategoryNonCompliant, "target"},
	attnStale:            {CodeStaleEvidence, CategoryStale, "target"},
	attnUnknown:          {CodeUnknown, CategoryUnknown, "target"},
	attnUnresolved:       {CodeUnresolvedDep, CategoryUnresolvedDeps, "relationship"},
}

// attn is one precomputed status item: derived from one record (or, for
// an unresolved edge, from the snapshot) when it changed. A stale
// evidence entry keeps only the evidence time; its reason is written when
// a query finds it older than the freshness window.
type attn struct {
	service string
	reason  string
	at      time.Time
}

// Status lists what needs attention in the selected categories, sorted by
// code then name, a page at a time. It walks the precomputed attention
// lists; only stale evidence is decided here, against asOf.
func (s *Snapshot) Status(q StatusQuery) (*StatusResult, error) {
	if q.Limit < 0 || q.Limit > MaxStatusLimit {
		return nil, invalid("limit", "limit %d: want 1..%d", q.Limit, MaxStatusLimit)
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultStatusLimit
	}
	budget, err := checkMaxBytes(q.MaxBytes)
	if err != nil {
		return nil, err
	}
	cats := q.categories()
	filter := s.filterKey(cats)
	offset := 0
	if q.Cursor != "" {
		c, err := s.checkCursor(q.Cursor, filter)
		if err != nil {
			return nil, err
		}
		offset = c.Offset
	}
	res := &StatusResult{Meta: s.meta(nil), Categories: cats, Items: []StatusItem{}, ByCode: map[string]int{}}
	pg := newPager(budget, res)
	// add puts the item at pos on the page when it belongs there and fits.
	add := func(pos int, item func() StatusItem) {
		if pos < offset || len(res.Items) == limit || pg.left <= 0 {
			return
		}
		it := item()
		if pg.take(encodedLen(it)) {
			res.Items = append(res.Items, it)
		}
	}
	pos := 0 // index of the next item in the whole listing
	for code := range nAttn {
		kind := attnKinds[code]
		if !slices.Contains(cats, kind.category) {
			continue
		}
		list := s.attention[code]
		if code != attnStale {
			// Skip a list before the page whole; take the page's part.
			n := list.len()
			if n > 0 {
				res.ByCode[kind.code] = n
			}
			if pos+n <= offset || len(res.Items) == limit || pg.left <= 0 {
				pos += n
				continue
			}
			for name, it := range list.all() {
				add(pos, func() StatusItem { return s.statusItem(code, name, it) })
				pos++
			}
			continue
		}
		if s.freshness <= 0 {
			continue
		}
		for name, it := range list.all() {
			if s.asOf.Sub(it.at) <= s.freshness {
				continue
			}
			add(pos, func() StatusItem { return s.statusItem(code, name, it) })
			res.ByCode[kind.code]++
			pos++
		}
	}
	res.Total = pos
	res.Count = len(res.Items)
	if end := offset + res.Count; end < res.Total && res.Count > 0 {
		res.Truncated = true
		res.NextCursor = encodeCursor(cursor{Snapshot: s.id, Filter: filter, Offset: end})
	}
	if offset == 0 {
		res.Observed = s.observedStatus() // on the first page only
	}
	return res, nil
}

func (s *Snapshot) statusItem(code attnCode, name string, it attn) StatusItem {
	k := attnKinds[code]
	out := StatusItem{Kind: k.kind, Name: name, Service: it.service, Code: k.code, Reason: it.reason}
	switch code {
	case attnStale:
		out.Reason = "evidence from " + it.at.UTC().Format(time.RFC3339) + " is older than the freshness window " + s.freshness.String()
	case attnUnresolved:
		out.Name = name[:strings.LastIndexByte(name, 0)] // drop the edge's place
	}
	return out
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
	sv, smiss := s.findService(q.Subject)
	if sv != nil {
		res.Found, res.Kind, res.Key, res.Status = true, "service", sv.key, sv.status
		s.explainService(sv, res)
		res.Meta = s.meta(nil)
		return res, nil
	}
	t, tmiss := s.findTarget(q.Subject)
	if t != nil {
		res.Found, res.Kind, res.Key, res.Status = true, "target", t.Key(), t.compliance()
		res.Reasons = s.targetReasons(t)
		res.Meta = s.meta(nil)
		return res, nil
	}
	res.Reason = "no service or target named " + q.Subject + " is in the fleet snapshot"
	cands := slices.Concat(smiss.Candidates, tmiss.Candidates)
	// A name several services (or targets) share is not a miss to
	// correct but a choice to make: say so, and list the keys.
	for _, m := range []Miss{smiss, tmiss} {
		if strings.Contains(m.Reason, "ambiguous") {
			res.Reason, cands = m.Reason, m.Candidates
			break
		}
	}
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
