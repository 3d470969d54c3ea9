package fleetgraph

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kubepact/kubepact/internal/didyoumean"
)

// Query error codes.
const (
	CodeInvalidQuery     = "INVALID_ARGUMENT"
	CodeCursorInvalid    = "CURSOR_INVALID"
	CodeSnapshotMismatch = "SNAPSHOT_MISMATCH"
)

// QueryError is a query the snapshot cannot answer as asked.
type QueryError struct {
	Code    string
	Field   string
	Message string
	// Snapshot is the snapshot a cursor was issued for, on SNAPSHOT_MISMATCH.
	Snapshot string
}

func (e *QueryError) Error() string { return e.Code + ": " + e.Message }

func invalid(field, format string, args ...any) *QueryError {
	return &QueryError{Code: CodeInvalidQuery, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Search limits (Pacto's).
const (
	DefaultSearchLimit = 100
	MaxSearchLimit     = 500
	DefaultStatusLimit = 200
	MaxStatusLimit     = 1000
)

// Relationship is one edge as answers show it: the declaration, resolved
// against the snapshot.
type Relationship struct {
	FromService      string `json:"fromService"`
	FromRevision     string `json:"fromRevision,omitempty"`
	To               string `json:"to"`
	Name             string `json:"name,omitempty"`
	ToService        string `json:"toService,omitempty"`
	ResolvedRevision string `json:"resolvedRevision,omitempty"`
	Type             string `json:"type"`
	Provenance       string `json:"provenance"`
	Required         bool   `json:"required,omitempty"`
	Compatibility    string `json:"compatibility,omitempty"`
	Resolved         bool   `json:"resolved"`
	Reason           string `json:"reason,omitempty"`
}

// ServiceSummary is one search row.
type ServiceSummary struct {
	Key           string   `json:"key"`
	Name          string   `json:"name"`
	Domain        string   `json:"domain,omitempty"`
	Owner         string   `json:"owner,omitempty"`
	Status        Status   `json:"status"`
	RevisionCount int      `json:"revisionCount"`
	TargetCount   int      `json:"targetCount"`
	Sources       []string `json:"sources"`
}

// ServiceView is a service in a get answer.
type ServiceView struct {
	ServiceSummary
	Owners []string `json:"owners,omitempty"`
}

// RevisionView is a contract revision as answers show it.
type RevisionView struct {
	Key          string        `json:"key"`
	Service      string        `json:"service"`
	Domain       string        `json:"domain,omitempty"`
	ServiceKey   string        `json:"serviceKey"`
	Version      string        `json:"version"`
	PactoVersion string        `json:"pactoVersion,omitempty"`
	Digest       string        `json:"digest"`
	RequestedRef string        `json:"requestedRef,omitempty"`
	ResolvedRef  string        `json:"resolvedRef,omitempty"`
	Owner        string        `json:"owner,omitempty"`
	Workload     string        `json:"workload,omitempty"`
	Interfaces   []string      `json:"interfaces,omitempty"`
	Capabilities []string      `json:"capabilities,omitempty"`
	Readiness    ReadinessView `json:"readiness"`
	Valid        *bool         `json:"valid,omitempty"`
	Findings     []Finding     `json:"findings,omitempty"`
	Source       string        `json:"source"`
	FetchedAt    *time.Time    `json:"fetchedAt,omitempty"`
	// Scopes are the namespaces publishing the revision that the reader
	// sees, sorted.
	Scopes []string `json:"scopes,omitempty"`
}

// ReadinessView is a revision's readiness evaluated at the snapshot's asOf.
type ReadinessView struct {
	State    string `json:"state"`
	Score    *int   `json:"score,omitempty"`
	MinScore *int   `json:"minScore,omitempty"`
	Expires  string `json:"expires,omitempty"`
}

// TargetView is a target as answers show it, with its link.
type TargetView struct {
	Key              string            `json:"key"`
	Scope            string            `json:"scope"`
	Kind             string            `json:"kind"`
	Name             string            `json:"name"`
	Labels           map[string]string `json:"labels,omitempty"`
	Service          string            `json:"service"`
	ServiceKey       string            `json:"serviceKey"`
	ContractRevision string            `json:"contractRevision,omitempty"`
	RevisionMatch    LinkState         `json:"revisionMatch"`
	LinkReason       string            `json:"linkReason,omitempty"`
	RequestedRef     string            `json:"requestedRef,omitempty"`
	ResolvedRef      string            `json:"resolvedRef,omitempty"`
	Digest           string            `json:"digest,omitempty"`
	Compliance       Status            `json:"compliance"`
	Coverage         *Coverage         `json:"coverage,omitempty"`
	Findings         []Finding         `json:"findings,omitempty"`
	EvidenceAt       *time.Time        `json:"evidenceAt,omitempty"`
	ReconciledAt     *time.Time        `json:"reconciledAt,omitempty"`
	ObservedRuntime  json.RawMessage   `json:"observedRuntime,omitempty"`
	Source           string            `json:"source"`
	Stale            bool              `json:"stale"`
}

func (s *Snapshot) summary(sv *service) ServiceSummary {
	out := ServiceSummary{Key: sv.key, Name: sv.name, Domain: sv.domain, Status: sv.status,
		RevisionCount: len(sv.revisions), TargetCount: len(sv.targets), Sources: slices.Clone(sv.sources)}
	if len(sv.owners) == 1 {
		out.Owner = sv.owners[0]
	}
	if out.Sources == nil {
		out.Sources = []string{}
	}
	return out
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (s *Snapshot) revisionView(r *Revision) RevisionView {
	v := RevisionView{
		Key: r.Key(), Service: r.Name, Domain: r.Domain, ServiceKey: r.ServiceKey(), Version: r.Version, PactoVersion: r.PactoVersion,
		Digest: r.Digest, RequestedRef: r.RequestedRef, ResolvedRef: r.ResolvedRef, Owner: r.Owner, Workload: r.Workload,
		Interfaces: slices.Clone(r.Interfaces), Capabilities: slices.Clone(r.Capabilities), Findings: slices.Clone(r.Findings),
		Source: r.Source, FetchedAt: timePtr(r.FetchedAt), Scopes: slices.Clone(r.Scopes),
		Readiness: ReadinessView{State: r.Readiness.state(s.asOf)},
	}
	if r.Readiness != nil {
		score, minScore := r.Readiness.Score, r.Readiness.MinScore
		v.Readiness.Score, v.Readiness.MinScore, v.Readiness.Expires = &score, &minScore, r.Readiness.Expires
	}
	if r.Valid != nil {
		ok := *r.Valid
		v.Valid = &ok
	}
	return v
}

func (s *Snapshot) targetView(t *Target) TargetView {
	rev, state, reason := s.link(t)
	return TargetView{
		Key: t.Key(), Scope: t.Scope, Kind: t.Kind, Name: t.Name, Labels: maps.Clone(t.Labels), Service: t.Service, ServiceKey: t.ServiceKey(),
		ContractRevision: rev, RevisionMatch: state, LinkReason: reason, RequestedRef: t.RequestedRef, ResolvedRef: t.ResolvedRef,
		Digest: t.Digest, Compliance: t.compliance(), Coverage: cloneCoverage(t.Coverage), Findings: gradedFindings(t.Findings, s.revision(rev)),
		EvidenceAt: timePtr(t.EvidenceAt), ReconciledAt: timePtr(t.ReconciledAt), ObservedRuntime: slices.Clone(t.ObservedRuntime),
		Source: t.Source, Stale: s.stale(t),
	}
}

func cloneCoverage(c *Coverage) *Coverage {
	if c == nil {
		return nil
	}
	cc := *c
	return &cc
}

// SearchQuery holds pacto_fleet_search's filters. Service-level filters
// match when any revision qualifies; target filters (compliance, scope,
// labels, and ready/not_ready when one is given) must hold on one target
// and its linked revision.
type SearchQuery struct {
	Text          string `json:"text,omitempty"`
	Owner         string `json:"owner,omitempty"`
	Status        Status `json:"status,omitempty"`
	Compliance    Status `json:"compliance,omitempty"`
	Source        string `json:"source,omitempty"`
	Scope         string `json:"scope,omitempty"`
	Workload      string `json:"workload,omitempty"`
	HasCapability string `json:"has_capability,omitempty"`
	HasDependency string `json:"has_dependency,omitempty"`
	Ready         bool   `json:"ready,omitempty"`
	NotReady      bool   `json:"not_ready,omitempty"`
	Labels        string `json:"labels,omitempty"`
	Limit         int    `json:"limit,omitempty"`
	Cursor        string `json:"cursor,omitempty"`
}

// SearchResult is pacto_fleet_search's answer.
type SearchResult struct {
	Meta       Meta             `json:"meta"`
	Total      int              `json:"total"`
	Count      int              `json:"count"`
	Services   []ServiceSummary `json:"services"`
	NextCursor string           `json:"nextCursor,omitempty"`
	Truncated  bool             `json:"truncated"`
}

// cursor is the opaque continuation token, bound to one snapshot and one
// filter set.
type cursor struct {
	Snapshot string `json:"s"`
	Filter   string `json:"f"`
	After    string `json:"k,omitempty"`
	Offset   int    `json:"o,omitempty"`
}

func encodeCursor(c cursor) string {
	raw, _ := json.Marshal(c) //nolint:errchkjson // plain strings and ints
	return base64.RawURLEncoding.EncodeToString(raw)
}

// CursorSnapshot returns the snapshot id a cursor was issued for, so a
// server can pin the request to it.
func CursorSnapshot(token string) (string, error) {
	c, err := decodeCursor(token)
	if err != nil {
		return "", err
	}
	return c.Snapshot, nil
}

func decodeCursor(token string) (cursor, error) {
	var c cursor
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || json.Unmarshal(raw, &c) != nil || c.Snapshot == "" || c.Offset < 0 {
		return c, &QueryError{Code: CodeCursorInvalid, Field: "cursor", Message: "the cursor is not one this server issued; repeat the query without it"}
	}
	return c, nil
}

// checkCursor decodes a cursor and checks it belongs to this snapshot and
// these filters.
func (s *Snapshot) checkCursor(token, filter string) (cursor, error) {
	c, err := decodeCursor(token)
	if err != nil {
		return c, err
	}
	if c.Snapshot != s.id {
		return c, &QueryError{Code: CodeSnapshotMismatch, Field: "cursor", Snapshot: c.Snapshot,
			Message: fmt.Sprintf("the cursor belongs to snapshot %s, but this answer reads snapshot %s: start the listing again without a cursor", c.Snapshot, s.id)}
	}
	if c.Filter != filter {
		return c, &QueryError{Code: CodeCursorInvalid, Field: "cursor", Message: "the cursor was issued for different filters: pass the same filters as the first page, or drop the cursor"}
	}
	return c, nil
}

func filterHash(v any) string {
	raw, _ := json.Marshal(v) //nolint:errchkjson // plain query structs
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

// parseLabels parses a selector k=v,k2 (k2 means: the label exists).
func parseLabels(sel string) (map[string]*string, error) {
	out := map[string]*string{}
	for part := range strings.SplitSeq(sel, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, hasV := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, invalid("labels", "label selector %q: want key=value pairs separated by commas", sel)
		}
		if hasV {
			val := strings.TrimSpace(v)
			out[k] = &val
		} else {
			out[k] = nil
		}
	}
	return out, nil
}

func (q *SearchQuery) check() (map[string]*string, error) {
	switch {
	case q.Limit < 0:
		return nil, invalid("limit", "limit %d: want 1..%d", q.Limit, MaxSearchLimit)
	case q.Limit > MaxSearchLimit:
		return nil, invalid("limit", "limit %d is above the maximum %d", q.Limit, MaxSearchLimit)
	case q.Status != "" && !q.Status.Valid():
		return nil, invalid("status", "status %q: want one of %v", q.Status, Statuses())
	case q.Compliance != "" && !q.Compliance.Valid():
		return nil, invalid("compliance", "compliance %q: want one of %v", q.Compliance, Statuses())
	case q.Ready && q.NotReady:
		return nil, invalid("ready", "ready and not_ready exclude each other")
	}
	return parseLabels(q.Labels)
}

// Search lists services matching q in key order, a page at a time.
func (s *Snapshot) Search(q SearchQuery) (*SearchResult, error) {
	labels, err := q.check()
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = DefaultSearchLimit
	}
	fq := q
	fq.Limit, fq.Cursor = 0, ""
	filter := s.filterKey(fq)
	var after string
	if q.Cursor != "" {
		c, err := s.checkCursor(q.Cursor, filter)
		if err != nil {
			return nil, err
		}
		after = c.After
	}
	res := &SearchResult{Meta: s.meta(nil), Services: []ServiceSummary{}}
	m := matcher{s: s, q: &fq, labels: labels, text: strings.ToLower(q.Text)}
	keys, exact := s.candidates(&m)
	noFilter := fq == SearchQuery{}
	if noFilter {
		// Every service matches: the total is known, and the walk can
		// start at the cursor and stop after the page.
		res.Total = s.order.len()
	}
	start := ""
	if noFilter {
		start = after
	}
	for key, ok := keys.seek(start); ok; key, ok = keys.next() {
		if !exact && !m.match(s.service(key)) {
			continue
		}
		if !noFilter {
			res.Total++
		}
		if after != "" && key <= after {
			continue
		}
		if len(res.Services) == limit {
			res.Truncated = true
			if noFilter {
				break
			}
			continue
		}
		res.Services = append(res.Services, s.summary(s.service(key)))
	}
	res.Count = len(res.Services)
	if res.Truncated {
		res.NextCursor = encodeCursor(cursor{Snapshot: s.id, Filter: filter, After: res.Services[len(res.Services)-1].Key})
	}
	return res, nil
}

// candidates is the stream of service keys a search visits: the
// intersection of the posting lists of its filters, smallest first. When
// exact is false the stream is a superset and every key must be checked
// with the matcher: has_dependency (resolution reads the snapshot),
// ready/not_ready (readiness expires with asOf), and several revision
// filters together (they must hold on one revision).
func (s *Snapshot) candidates(m *matcher) (keys stream, exact bool) {
	q := m.q
	var in []stream
	exact = true
	none := &sliceStream{}
	term := func(t string) bool {
		l, ok := s.post.get(t)
		if ok {
			in = append(in, newListStream(l))
		}
		return ok
	}
	if q.Owner != "" && !term(termOwner+foldKey(q.Owner)) ||
		q.Status != "" && !term(termStatus+string(q.Status)) ||
		q.Source != "" && !term(termSource+q.Source) ||
		q.Workload != "" && !term(termWorkload+q.Workload) ||
		q.HasCapability != "" && !term(termCapability+q.HasCapability) ||
		q.Ready && !term(termReadiness) {
		return none, true
	}
	revFilters := 0
	for _, f := range []string{q.Workload, q.HasCapability, q.HasDependency} {
		if f != "" {
			revFilters++
		}
	}
	if revFilters > 1 || q.Ready || q.NotReady {
		exact = false
	}
	if q.HasDependency != "" {
		exact = false
		deps := s.dependencyCandidates(q.HasDependency)
		if len(deps) == 0 {
			return none, true
		}
		in = append(in, &sliceStream{keys: deps})
	}
	if q.Compliance != "" || q.Scope != "" || len(m.labels) > 0 {
		var tin []stream
		tterm := func(t string) bool {
			l, ok := s.post.get(t)
			if ok {
				tin = append(tin, newListStream(l))
			}
			return ok
		}
		if q.Compliance != "" && !tterm(termCompliance+string(q.Compliance)) || q.Scope != "" && !tterm(termScope+q.Scope) {
			return none, true
		}
		for k, v := range m.labels {
			t := termLabelKey + k
			if v != nil {
				t = termLabel + k + "\x00" + *v
			}
			if !tterm(t) {
				return none, true
			}
		}
		in = append(in, &serviceStream{in: intersect(tin)})
	}
	if m.text != "" || len(in) == 0 {
		in = append(in, &textStream{sc: s.order.scan(), text: m.text, n: s.order.len()})
	}
	return intersect(in), exact
}

// dependencyCandidates are the services that may have a revision with a
// dependency on dep: by the edge's reference name, alias or key, or, when
// dep is a service key, by its name or one of its revisions' digests.
// Sorted, distinct.
func (s *Snapshot) dependencyCandidates(dep string) []string {
	terms := []string{termDepName + dep, termDepKey + dep}
	if sv := s.service(dep); sv != nil {
		terms = append(terms, termDepName+sv.name)
		for _, r := range sv.revs {
			terms = append(terms, termDepDigest+r.Digest)
		}
	}
	var out []string
	for _, t := range terms {
		if l, ok := s.post.get(t); ok {
			for k := range l.all() {
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

type matcher struct {
	s      *Snapshot
	q      *SearchQuery
	labels map[string]*string
	text   string
}

func (m *matcher) match(sv *service) bool {
	q := m.q
	if m.text != "" && !strings.Contains(sv.lower, m.text) {
		return false
	}
	if q.Owner != "" && !slices.ContainsFunc(sv.owners, func(o string) bool { return strings.EqualFold(o, q.Owner) }) {
		return false
	}
	if q.Status != "" && sv.status != q.Status {
		return false
	}
	if q.Source != "" && !slices.Contains(sv.sources, q.Source) {
		return false
	}
	if q.Workload != "" || q.HasCapability != "" || q.HasDependency != "" {
		if !slices.ContainsFunc(sv.revs, m.revisionMatches) {
			return false
		}
	}
	targetFilter := q.Compliance != "" || q.Scope != "" || len(m.labels) > 0
	if targetFilter {
		return slices.ContainsFunc(sv.tgts, m.targetMatches)
	}
	if q.Ready || q.NotReady {
		return slices.ContainsFunc(sv.revs, m.readyMatches)
	}
	return true
}

func (m *matcher) revisionMatches(r *Revision) bool {
	if r == nil {
		return false
	}
	q := m.q
	if q.Workload != "" && r.Workload != q.Workload {
		return false
	}
	if q.HasCapability != "" && !slices.Contains(r.Capabilities, q.HasCapability) {
		return false
	}
	if q.HasDependency != "" && !slices.ContainsFunc(r.Edges, func(e Edge) bool {
		if e.Type != EdgeDependency {
			return false
		}
		t := e.target()
		if ServiceKey(t.domain, t.name) == q.HasDependency || slices.Contains(t.names(), q.HasDependency) {
			return true
		}
		rel := m.s.resolve(r, e)
		return rel.Resolved && rel.ToService == q.HasDependency
	}) {
		return false
	}
	return true
}

func (m *matcher) readyMatches(r *Revision) bool {
	if r == nil {
		return false
	}
	passing := r.Readiness.state(m.s.asOf) == ReadinessPassing
	return (m.q.Ready && passing) || (m.q.NotReady && !passing)
}

func (m *matcher) targetMatches(t *Target) bool {
	if t == nil {
		return false
	}
	q := m.q
	if q.Compliance != "" && t.compliance() != q.Compliance {
		return false
	}
	if q.Scope != "" && t.Scope != q.Scope {
		return false
	}
	for k, want := range m.labels {
		got, ok := t.Labels[k]
		if !ok || (want != nil && got != *want) {
			return false
		}
	}
	if q.Ready || q.NotReady {
		rev, _, _ := m.s.link(t)
		return m.readyMatches(m.s.revision(rev))
	}
	return true
}

// GetQuery names one service or one target, by key or unique name.
type GetQuery struct {
	Service string `json:"service,omitempty"`
	Target  string `json:"target,omitempty"`
}

// Miss is the structured answer to a subject that is not in the snapshot.
type Miss struct {
	Found      bool     `json:"found"`
	Reason     string   `json:"reason,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
}

// GetResult is pacto_fleet_get's answer: a service with its revisions,
// targets and edges, or a target with its linked revision.
type GetResult struct {
	Meta Meta `json:"meta"`
	Miss
	Subject      string         `json:"subject"`
	Kind         string         `json:"kind"`
	Service      *ServiceView   `json:"service,omitempty"`
	Revisions    []RevisionView `json:"revisions,omitempty"`
	Targets      []TargetView   `json:"targets,omitempty"`
	Dependencies []Relationship `json:"dependencies,omitempty"`
	Dependents   []string       `json:"dependents,omitempty"`
	Target       *TargetView    `json:"target,omitempty"`
	Revision     *RevisionView  `json:"revision,omitempty"`
	// Refs are a service's canonical registry references (without tag or
	// digest), and DependencyEntry what another contract's dependencies
	// list needs to depend on it.
	Refs            []string         `json:"refs,omitempty"`
	DependencyEntry *DependencyEntry `json:"dependencyEntry,omitempty"`
}

// Get answers pacto_fleet_get.
func (s *Snapshot) Get(q GetQuery) (*GetResult, error) {
	switch {
	case q.Service != "" && q.Target != "":
		return nil, invalid("service", "provide either 'service' or 'target', not both")
	case q.Service == "" && q.Target == "":
		return nil, invalid("service", "provide either 'service' or 'target'")
	}
	if q.Target != "" {
		res := &GetResult{Subject: q.Target, Kind: "target"}
		t, miss := s.findTarget(q.Target)
		if t == nil {
			res.Miss, res.Meta = miss, s.meta(nil)
			return res, nil
		}
		tv := s.targetView(t)
		res.Found, res.Target = true, &tv
		var lims []Limitation
		if r := s.revision(tv.ContractRevision); r != nil {
			rv := s.revisionView(r)
			res.Revision = &rv
		} else {
			lims = append(lims, linkLimitation(tv))
		}
		res.Meta = s.meta(lims)
		return res, nil
	}
	res := &GetResult{Subject: q.Service, Kind: "service"}
	sv, miss := s.findService(q.Service)
	if sv == nil {
		res.Miss, res.Meta = miss, s.meta(nil)
		return res, nil
	}
	res.Found = true
	view := ServiceView{ServiceSummary: s.summary(sv), Owners: slices.Clone(sv.owners)}
	res.Service = &view
	res.Revisions, res.Targets, res.Dependencies, res.Dependents = []RevisionView{}, []TargetView{}, []Relationship{}, []string{}
	var lims []Limitation
	for _, k := range sv.revisions {
		r := s.revision(k)
		res.Revisions = append(res.Revisions, s.revisionView(r))
		for _, e := range r.Edges {
			rel := s.resolve(r, e)
			if !rel.Resolved {
				lims = append(lims, Limitation{Code: LimitUnresolvedDep, Message: rel.FromRevision + " → " + rel.To + ": " + rel.Reason, Subject: rel.FromRevision})
			}
			res.Dependencies = append(res.Dependencies, rel)
		}
	}
	for _, k := range sv.targets {
		tv := s.targetView(s.target(k))
		if tv.ContractRevision == "" {
			lims = append(lims, linkLimitation(tv))
		}
		res.Targets = append(res.Targets, tv)
	}
	res.Dependents = s.dependentServices(sv)
	res.Refs = s.canonicalRefs(sv)
	res.DependencyEntry = s.dependencyEntry(sv, res.Refs)
	res.Meta = s.meta(lims)
	return res, nil
}

func linkLimitation(tv TargetView) Limitation {
	code := LimitEvidenceMissing
	switch {
	case tv.RevisionMatch == LinkAmbiguous:
		code = LimitLinkAmbiguous
	case strings.HasPrefix(tv.LinkReason, LimitTargetRefConflict):
		code = LimitTargetRefConflict
	}
	return Limitation{Code: code, Message: "target " + tv.Key + " is not linked to a contract revision: " + tv.LinkReason, Subject: tv.Key}
}

// dependentServices are the services with a revision whose edge resolves
// to sv, sorted.
func (s *Snapshot) dependentServices(sv *service) []string {
	out := []string{}
	for _, rel := range s.inbound(sv) {
		out = append(out, rel.FromService)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// inbound are the resolved edges pointing at sv, sorted by revision: the
// edges whose reference or alias names sv's name (depsByName) and those
// pinned to a digest of one of its revisions (pinned). Each is resolved
// the way the forward direction resolves it, and kept only if it lands
// on sv.
func (s *Snapshot) inbound(sv *service) []Relationship {
	if out, ok := s.in.get(sv.key); ok {
		return out
	}
	out := s.resolveInbound(sv)
	s.in.put(sv.key, out)
	return out
}

// inboundMemoEdges bounds the relationships one snapshot's inbound memo
// keeps (about 200 bytes each, so some 13 MiB): the services a hub's
// dependents and impact walk, many times over, at 10,000 services.
const inboundMemoEdges = 1 << 16

// inboundMemo keeps the inbound edges of the services walked so far: a
// snapshot never changes, so a second graph or impact walk over the same
// dependents reads them instead of resolving every edge again. It stops
// taking entries at inboundMemoEdges; the slices are never modified.
type inboundMemo struct {
	mu    sync.RWMutex
	m     map[string][]Relationship
	edges int
}

func (c *inboundMemo) get(key string) ([]Relationship, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out, ok := c.m[key]
	return out, ok
}

func (c *inboundMemo) put(key string, rels []Relationship) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.edges+len(rels)+1 > inboundMemoEdges {
		return
	}
	if c.m == nil {
		c.m = map[string][]Relationship{}
	}
	if _, ok := c.m[key]; !ok {
		c.m[key] = rels
		c.edges += len(rels) + 1
	}
}

// resolveInbound computes inbound from the inbound index.
func (s *Snapshot) resolveInbound(sv *service) []Relationship {
	return s.indexedInbound(sv)
}

// findService looks a service up by key, else by a name unique across
// domains. A miss carries did-you-mean candidates.
func (s *Snapshot) findService(q string) (*service, Miss) {
	if sv := s.service(q); sv != nil {
		return sv, Miss{}
	}
	keys, _ := s.byName.get(q)
	switch len(keys) {
	case 1:
		return s.service(keys[0]), Miss{}
	case 0:
		return nil, Miss{Reason: fmt.Sprintf("service %q is not in the fleet snapshot", q), Candidates: s.suggestServices(q)}
	default:
		return nil, Miss{Reason: fmt.Sprintf("service name %q is ambiguous: give a key", q), Candidates: slices.Clone(keys)}
	}
}

func (s *Snapshot) findTarget(q string) (*Target, Miss) {
	if t := s.target(q); t != nil {
		return t, Miss{}
	}
	keys, _ := s.targetsByName.get(q)
	switch len(keys) {
	case 1:
		return s.target(keys[0]), Miss{}
	case 0:
		return nil, Miss{Reason: fmt.Sprintf("target %q is not in the fleet snapshot", q), Candidates: s.suggestTargets(q)}
	default:
		return nil, Miss{Reason: fmt.Sprintf("target name %q is ambiguous: give a key", q), Candidates: slices.Clone(keys)}
	}
}

// maxCandidates bounds did-you-mean lists.
const maxCandidates = 5

type scored struct {
	key  string
	dist int
}

func pick(q string, all func(yield func(key, name string) bool)) []string {
	ql := strings.ToLower(q)
	var hits []scored
	all(func(key, name string) bool {
		nl := strings.ToLower(name)
		d := -1
		switch {
		case strings.Contains(nl, ql) || strings.Contains(ql, nl) || strings.Contains(strings.ToLower(key), ql):
			d = 0
		default:
			// The same rule and distance as an argument's didYouMean.
			if e, ok := didyoumean.Typo(ql, nl); ok {
				d = e
			}
		}
		if d >= 0 {
			hits = append(hits, scored{key, d})
		}
		return true
	})
	slices.SortFunc(hits, func(a, b scored) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.key, b.key)
	})
	out := []string{}
	for i := 0; i < len(hits) && i < maxCandidates; i++ {
		out = append(out, hits[i].key)
	}
	return out
}

func (s *Snapshot) suggestServices(q string) []string {
	return pick(q, func(yield func(string, string) bool) {
		for k, sv := range s.services.all() {
			if !yield(k, sv.name) {
				return
			}
		}
	})
}

func (s *Snapshot) suggestTargets(q string) []string {
	return pick(q, func(yield func(string, string) bool) {
		for k, t := range s.targets.all() {
			if !yield(k, t.Name) {
				return
			}
		}
	})
}
