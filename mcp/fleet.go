package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/internal/authoring"

	"github.com/kubepact/kubepact/fleetgraph/source"
)

// FamilyFleet is pacto_fleet_search, _get, _graph, _status, _explain and
// pacto_impact: read-only queries over versioned fleet snapshots.
const FamilyFleet Family = "fleet"

// Fleet error codes (besides fleetgraph's query codes).
const (
	// CodeUnavailable: the answer cannot be given now (a ref could not be
	// fetched, the caller's visibility could not be decided); retry.
	CodeUnavailable     = "UNAVAILABLE"
	CodeSnapshotExpired = "SNAPSHOT_EXPIRED" // a pinned snapshot is no longer kept
	CodeNotComparable   = "INVALID_CONTRACT" // an impact ref whose pacto.yaml does not parse
)

// fleetLoadStall bounds how long collecting the sources when the server
// starts may go without progress (a bundle directory read, an OCI
// reference loaded or failed): a stalled registry or file system ends the
// start with an error naming the bound, while a large fleet on a loaded
// machine, which keeps making progress, is read whole however long it
// takes. The watch looks once a period, so a stall ends the start between
// one and two minutes after the last progress. (A bound of 2 minutes on
// the whole collection made a 10,000-bundle start at load 20 give up with
// an empty local source.)
const fleetLoadStall = time.Minute

// fleetLoadGCPercent is the GOGC the first collection runs with (unless
// GOGC is set). Loading a fleet allocates about 600 KB a bundle (YAML
// trees, the OpenAPI check's decodes) and keeps about 4 KB, so at the
// default of 100 the collector runs every few MiB and marks the growing
// snapshot each time. At 200, a 10,000-bundle local start took 25.7
// instead of 32.6 s of CPU (0.79x; BenchmarkLocalFleetStart with
// GOGC=200 against the default, same binary) for a peak RSS 14 MiB
// higher (128 against 114 MiB); the heap kept afterwards is the same.
const fleetLoadGCPercent = 200

// FleetOptions is the fleet option group: which sources feed the fleet
// snapshot. There is no implicit source.
type FleetOptions struct {
	// Enabled turns the fleet family on (--fleet).
	Enabled bool
	// Local directories to scan for bundles (--local, repeatable).
	Local []string
	// OCI references to load (--oci, repeatable).
	OCI []string
	// TargetState is a pacto.dev/fleet-targets/v1 file (--target-state).
	TargetState string
	// Freshness marks evidence older than this stale (--freshness).
	Freshness time.Duration
	// Retention is how long a replaced snapshot still answers pinned
	// requests (--snapshot-retention, default 10m).
	Retention time.Duration
	// Builder, when set, is the live fleet (the operator's feed drives it)
	// and the sources above are not collected.
	Builder *fleetgraph.Builder
	// Bundles, with Builder, is the loader the live fleet's feed reads
	// revisions with: pacto_impact reads through it too, so a revision
	// the feed holds is not read and held a second time. Nil: impact
	// has a loader of its own.
	Bundles *source.RefLoader
	// WatchDebounce is how long the watch on Local and TargetState waits
	// after a change before it re-reads (default 250ms).
	WatchDebounce time.Duration
	// Traces are OTLP/JSON trace exports read once at start for the
	// fleet's observed edges (--traces, repeatable; observed.go).
	Traces []string
	// CacheDir, when set, keeps each --local source's bundle identities
	// and verdicts between starts, keyed by content and build (see
	// source.LocalSource.CacheDir). Not a flag of its own: the command
	// sets it below --cache-dir, and leaves it empty with --no-cache.
	CacheDir string
}

// BindFlags binds the fleet flags.
func (o *FleetOptions) BindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "fleet", o.Enabled, "serve the fleet tools (pacto_fleet_*, pacto_impact) over the sources given by --local, --oci and --target-state")
	fs.StringSliceVar(&o.Local, "local", o.Local, "fleet source: directory scanned for bundles (repeatable; depth 8, hidden, vendor and node_modules skipped)")
	fs.StringSliceVar(&o.OCI, "oci", o.OCI, "fleet source: oci:// bundle reference (repeatable)")
	fs.StringVar(&o.TargetState, "target-state", o.TargetState, "fleet source: a pacto.dev/fleet-targets/v1 target-state file")
	fs.DurationVar(&o.Freshness, "freshness", o.Freshness, "mark target evidence older than this stale (0: never)")
	fs.DurationVar(&o.Retention, "snapshot-retention", o.Retention, "how long a replaced fleet snapshot still answers pinned requests (default 10m)")
	fs.StringSliceVar(&o.Traces, "traces", o.Traces, "observed edges: an OTLP/JSON trace export read at start (repeatable; each at most 16 MiB and 200,000 spans)")
}

// fleetSources is the remedy of a fleet without a source; its verbs are
// the three source fields.
const fleetSources = "set %s (directories scanned for bundles), %s (oci:// references of published bundles) or %s (a pacto.dev/fleet-targets/v1 file); nothing is scanned implicitly"

// validate rejects the fleet family (Fleet.Enabled, or named in
// families) without a source, and sources without the fleet family.
func (o *FleetOptions) validate(families []Family) error {
	hasSource := len(o.Local) > 0 || len(o.OCI) > 0 || o.TargetState != "" || o.Builder != nil
	named := slices.Contains(families, FamilyFleet)
	switch {
	case o.Enabled && !hasSource:
		return optionErrorf("Fleet.Enabled", "needs at least one source: "+fleetSources, fieldName("Fleet.Local"), fieldName("Fleet.OCI"), fieldName("Fleet.TargetState"))
	case named && !hasSource:
		return optionErrorf("Families", ": the fleet family needs at least one source: "+fleetSources, fieldName("Fleet.Local"), fieldName("Fleet.OCI"), fieldName("Fleet.TargetState"))
	case !o.Enabled && !named && hasSource && o.Builder == nil:
		return optionErrorf("Fleet.Local", ", %s and %s are fleet sources: set %s to serve the fleet tools", fieldName("Fleet.OCI"), fieldName("Fleet.TargetState"), fieldName("Fleet.Enabled"))
	case o.Freshness < 0:
		return optionErrorf("Fleet.Freshness", "must not be negative")
	case len(o.Traces) > 0 && !o.Enabled && !named:
		return optionErrorf("Fleet.Traces", "gives the fleet's observed edges: set %s (and a source) to serve the fleet tools", fieldName("Fleet.Enabled"))
	}
	return nil
}

// families adds the fleet family when --fleet is on.
func (o *FleetOptions) families(fs []Family) []Family {
	for _, f := range fs {
		if f == FamilyFleet {
			return fs
		}
	}
	if o.Enabled {
		return append(fs, FamilyFleet)
	}
	return fs
}

// sessionOf is the calling session of a tool call's context (nil outside
// a call), for snapshot pinning: the session of the tools/call request
// that withCallRequest put there, so a call carries one context value for
// both.
func sessionOf(ctx context.Context) *sdk.ServerSession {
	if req, _ := ctx.Value(callRequestKey{}).(*sdk.CallToolRequest); req != nil {
		return req.Session
	}
	return nil
}

// fleetState serves the fleet family: the builder, the pins and the
// loader impact resolves refs with.
type fleetState struct {
	b      *fleetgraph.Builder
	loader *source.RefLoader
	stdio  bool
	idle   time.Duration
	// scoper, when set, restricts every answer to what the caller may
	// see; log receives why a restriction could not be decided.
	scoper Scoper
	log    logr.Logger
	// refsOnly: impact's arguments name fleet revisions only
	// (Options.FleetRefsOnly; see fleetrefs.go).
	refsOnly bool
	// workspace is the root pacto_impact's traces must be inside; empty
	// with refsOnly, where traces are refused.
	workspace string

	mu   sync.Mutex
	pins map[*sdk.ServerSession]*pin
}

type pin struct {
	snap *fleetgraph.Snapshot
	used time.Time
}

// SnapshotLatest is the snapshot argument of a fleet tool that reads the
// newest snapshot and moves the calling session's pin to it: the one way a
// session sees what changed since it started (a contract the agent has
// just created in a watched --local directory, say).
const SnapshotLatest = "latest"

// PinInfo tells an agent which snapshot answered and whether a newer one
// exists.
type PinInfo struct {
	By             string `json:"by" jsonschema:"session, snapshot, cursor or none"`
	SnapshotID     string `json:"snapshotId"`
	Current        string `json:"current"`
	NewerAvailable bool   `json:"newerAvailable"`
	// MovedFrom is the snapshot the session read before this call moved
	// it to the newest (snapshot "latest").
	MovedFrom string `json:"movedFrom,omitempty"`
}

// note is what a fleet answer's text adds about its snapshot: that the
// session has just moved, or that a newer snapshot exists and how to read
// it. Agents that read only the text must not miss either.
func (p PinInfo) note() string {
	switch {
	case p.MovedFrom != "":
		return fmt.Sprintf(" This session now reads the newest snapshot, %s (it read %s before).", p.SnapshotID, p.MovedFrom)
	case !p.NewerAvailable:
		return ""
	case p.By == "session":
		return fmt.Sprintf(" A newer snapshot, %s, exists; this session reads %s: pass snapshot: %q to move the session to it.", p.Current, p.SnapshotID, SnapshotLatest)
	case p.By == "cursor":
		return fmt.Sprintf(" A newer snapshot, %s, exists; this page is from %s: start again without cursor, with snapshot: %q, to read it.", p.Current, p.SnapshotID, SnapshotLatest)
	}
	return fmt.Sprintf(" A newer snapshot, %s, exists; this answer is from %s: pass snapshot: %q to read it.", p.Current, p.SnapshotID, SnapshotLatest)
}

// snapshotFor picks the snapshot a call reads: an explicit snapshot
// argument, else the cursor's, else the session's pin, else the current.
// A pinned id is the session's own snapshot or one the Builder still
// retains: a session holds its snapshot until it asks for the newest
// (SnapshotLatest), so the cursors it was given keep working after the
// Builder's history has moved on.
func (f *fleetState) snapshotFor(ctx context.Context, explicit, cursor string) (*fleetgraph.Snapshot, PinInfo, error) {
	cur := f.b.Current()
	latest := explicit == SnapshotLatest
	if latest && cursor != "" {
		return nil, PinInfo{}, &ToolError{Code: CodeInvalidArgument, Field: "cursor",
			Message: fmt.Sprintf("snapshot %q reads the newest snapshot, and a cursor continues a listing of the snapshot it came from: drop the cursor to list again from the first page of the newest snapshot, or drop snapshot to continue this listing", SnapshotLatest)}
	}
	id, by := explicit, "snapshot"
	if latest {
		id = ""
	}
	if id == "" && cursor != "" {
		cid, err := fleetgraph.CursorSnapshot(cursor)
		if err != nil {
			return nil, PinInfo{}, queryToolError(err)
		}
		id, by = cid, "cursor"
	}
	var pinned *fleetgraph.Snapshot
	movedFrom := ""
	ss := sessionOf(ctx)
	if ss != nil && (f.stdio || ss.ID() != "") {
		now := time.Now()
		f.mu.Lock()
		for k, p := range f.pins {
			if now.Sub(p.used) > f.idle {
				delete(f.pins, k)
			}
		}
		p := f.pins[ss]
		if p != nil && latest && p.snap.Seq() < cur.Seq() {
			movedFrom = p.snap.ID()
		}
		if p == nil || latest {
			p = &pin{snap: cur}
			f.pins[ss] = p
		}
		p.used = now
		pinned = p.snap
		f.mu.Unlock()
	}
	var snap *fleetgraph.Snapshot
	switch {
	case id != "" && pinned != nil && pinned.ID() == id:
		snap = pinned
	case id != "":
		s, ok := f.b.Lookup(id)
		if !ok {
			field := "snapshot"
			if by == "cursor" {
				field = "cursor"
			}
			return nil, PinInfo{}, &ToolError{Code: CodeSnapshotExpired, Field: field,
				Message: fmt.Sprintf("snapshot %s is no longer kept; the newest snapshot is %s: repeat the query with snapshot: %q (and without cursor) to read it", id, cur.ID(), SnapshotLatest)}
		}
		snap = s
	case pinned != nil:
		snap, by = pinned, "session"
	default:
		snap, by = cur, "none"
	}
	info := PinInfo{By: by, SnapshotID: snap.ID(), Current: cur.ID(), NewerAvailable: cur.Seq() > snap.Seq(), MovedFrom: movedFrom}
	snap, err := f.restrict(ctx, snap)
	if err != nil {
		return nil, PinInfo{}, err
	}
	return snap, info, nil
}

// restrict narrows snap to what the caller may see, when a Scoper is
// configured: the answer is computed inside the restricted view, never
// filtered afterwards. A call without an identity, or whose visibility
// cannot be decided now, is refused and shown nothing.
func (f *fleetState) restrict(ctx context.Context, snap *fleetgraph.Snapshot) (*fleetgraph.Snapshot, error) {
	if f.scoper == nil {
		return snap, nil
	}
	who, ok := caller(ctx)
	if !ok {
		return nil, &ToolError{Code: CodeUnavailable, Message: "the fleet answers only authenticated HTTP callers here: connect over HTTP with a bearer token"}
	}
	v, err := f.scoper.Visibility(ctx, who, snap)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &ToolError{Code: CodeCancelled, Message: "the call was cancelled while deciding what the caller may see"}
		}
		f.log.Error(err, "Could not decide what a caller may see", "user", who.User)
		return nil, &ToolError{Code: CodeUnavailable, Message: "could not decide which namespaces you may see right now; retry shortly"}
	}
	if !v.All() && len(v.Scopes()) == 0 {
		v = fleetgraph.NoScopes(seesNoNamespace)
	}
	return snap.Restrict(v), nil
}

// seesNoNamespace is the limitation on every fleet answer to a caller who
// may see none of the fleet's namespaces: an empty answer is then no
// evidence of an empty fleet. (The same words for every such caller, so
// they share one view.)
const seesNoNamespace = "your identity may list ServiceContracts in none of the namespaces where this fleet has records, nor cluster-wide, " +
	"so this answer shows nothing: it cannot tell an empty fleet from one you may not see. To see a namespace's fleet, the identity needs " +
	"list on servicecontracts.kubepact.dev there, e.g. `kubectl -n NAMESPACE create rolebinding NAME --clusterrole=kubepact-fleet-reader --serviceaccount=NAMESPACE:NAME`"

func queryToolError(err error) error {
	var qe *fleetgraph.QueryError
	if errors.As(err, &qe) {
		return &ToolError{Code: qe.Code, Field: qe.Field, Message: qe.Message}
	}
	var re *source.RefError
	if errors.As(err, &re) {
		return &ToolError{Code: re.Code, Message: re.Message}
	}
	return err
}

// Fleet tool arguments: Pacto's names, plus snapshot and cursor.
type (
	fleetSearchArgs struct {
		Text          string `json:"text,omitempty" jsonschema:"substring of name or owner"`
		Owner         string `json:"owner,omitempty"`
		Status        string `json:"status,omitempty" jsonschema:"service status"`
		Compliance    string `json:"compliance,omitempty" jsonschema:"a target's compliance"`
		Source        string `json:"source,omitempty" jsonschema:"source id"`
		Scope         string `json:"scope,omitempty" jsonschema:"a target's scope"`
		Workload      string `json:"workload,omitempty"`
		HasCapability string `json:"has_capability,omitempty"`
		HasDependency string `json:"has_dependency,omitempty" jsonschema:"dependency name or service key"`
		Ready         bool   `json:"ready,omitempty"`
		NotReady      bool   `json:"not_ready,omitempty"`
		Labels        string `json:"labels,omitempty" jsonschema:"target labels k=v,k2"`
		Limit         int    `json:"limit,omitempty" jsonschema:"default 100, max 500"`
		Cursor        string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous page"`
		Snapshot      string `json:"snapshot,omitempty" jsonschema:"snapshot id, or latest"`
	}
	fleetGetArgs struct {
		Service  string `json:"service,omitempty" jsonschema:"service key or unique name"`
		Target   string `json:"target,omitempty" jsonschema:"target key or unique name"`
		Snapshot string `json:"snapshot,omitempty"`
	}
	fleetGraphArgs struct {
		Service         string `json:"service,omitempty" jsonschema:"root: a service (all revisions)"`
		Revision        string `json:"revision,omitempty" jsonschema:"root: a revision key"`
		Target          string `json:"target,omitempty" jsonschema:"root: a target's linked revision"`
		Direction       string `json:"direction,omitempty" jsonschema:"default dependencies"`
		Transitive      bool   `json:"transitive,omitempty"`
		MaxDepth        int    `json:"max_depth,omitempty" jsonschema:"0 = unlimited"`
		MaxNodes        int    `json:"max_nodes,omitempty" jsonschema:"default 500"`
		IncludeObserved bool   `json:"include_observed,omitempty" jsonschema:"also observed (traced) edges"`
		MaxBytes        int    `json:"max_bytes,omitempty"`
		Cursor          string `json:"cursor,omitempty"`
		Snapshot        string `json:"snapshot,omitempty"`
	}
	fleetStatusArgs struct {
		NeedsAttention   bool   `json:"needs_attention,omitempty" jsonschema:"every category (the default)"`
		NonCompliant     bool   `json:"non_compliant,omitempty"`
		Unknown          bool   `json:"unknown,omitempty"`
		Invalid          bool   `json:"invalid,omitempty"`
		Stale            bool   `json:"stale,omitempty"`
		MissingReadiness bool   `json:"missing_readiness,omitempty"`
		UnresolvedDeps   bool   `json:"unresolved_deps,omitempty"`
		Limit            int    `json:"limit,omitempty" jsonschema:"default 200"`
		MaxBytes         int    `json:"max_bytes,omitempty"`
		Cursor           string `json:"cursor,omitempty"`
		Snapshot         string `json:"snapshot,omitempty"`
	}
	fleetExplainArgs struct {
		Subject  string `json:"subject" jsonschema:"service or target, key or name"`
		Snapshot string `json:"snapshot,omitempty"`
	}
	impactArgs struct {
		OldRef          string `json:"old_ref" jsonschema:"bundle dir in the workspace or oci://ref"`
		NewRef          string `json:"new_ref" jsonschema:"bundle dir in the workspace or oci://ref"`
		IncludeObserved bool   `json:"include_observed,omitempty" jsonschema:"also observed (traced) edges"`
		// Traces is Pacto's per-call trace export: a file in the
		// workspace on kubepact mcp; refused by the operator.
		Traces   string `json:"traces,omitempty" jsonschema:"an OTLP/JSON file in the workspace"`
		MaxBytes int    `json:"max_bytes,omitempty"`
		Cursor   string `json:"cursor,omitempty"`
		Snapshot string `json:"snapshot,omitempty"`
	}
)

// Fleet answers: fleetgraph's result plus the pin.
type (
	fleetSearchOut struct {
		*fleetgraph.SearchResult
		Pin PinInfo `json:"pin"`
	}
	fleetGetOut struct {
		*fleetgraph.GetResult
		Pin PinInfo `json:"pin"`
	}
	fleetGraphOut struct {
		*fleetgraph.GraphResult
		Pin PinInfo `json:"pin"`
	}
	fleetStatusOut struct {
		*fleetgraph.StatusResult
		Pin PinInfo `json:"pin"`
	}
	fleetExplainOut struct {
		*fleetgraph.ExplainResult
		Pin PinInfo `json:"pin"`
	}
	impactOut struct {
		*fleetgraph.ImpactResult
		Pin PinInfo `json:"pin"`
	}
)

// pinned is a fleet answer, whose text ends with its pin's note.
type pinned interface{ pinInfo() PinInfo }

func (o *fleetSearchOut) pinInfo() PinInfo  { return o.Pin }
func (o *fleetGetOut) pinInfo() PinInfo     { return o.Pin }
func (o *fleetGraphOut) pinInfo() PinInfo   { return o.Pin }
func (o *fleetStatusOut) pinInfo() PinInfo  { return o.Pin }
func (o *fleetExplainOut) pinInfo() PinInfo { return o.Pin }
func (o *impactOut) pinInfo() PinInfo       { return o.Pin }

// withPinNote makes every successful answer of t say, in its text, what
// its pin's note says.
func withPinNote(t *tool) {
	call := t.call
	t.call = func(ctx context.Context, args json.RawMessage) *sdk.CallToolResult {
		res := call(ctx, args)
		if p, ok := res.StructuredContent.(pinned); ok && !res.IsError && len(res.Content) == 1 {
			if tc, ok := res.Content[0].(*sdk.TextContent); ok {
				if note := p.pinInfo().note(); note != "" {
					res.Content[0] = &sdk.TextContent{Text: tc.Text + note}
				}
			}
		}
		return res
	}
}

// newerHas reports whether what a pinned answer did not find (found
// reports it for a snapshot) is in the newest snapshot, as the caller may
// see it.
func (f *fleetState) newerHas(ctx context.Context, p PinInfo, found func(*fleetgraph.Snapshot) bool) bool {
	if !p.NewerAvailable {
		return false
	}
	cur, ok := f.b.Lookup(p.Current)
	if !ok {
		cur = f.b.Current()
	}
	view, err := f.restrict(ctx, cur)
	return err == nil && found(view)
}

// inNewer is the reason of a miss that the newest snapshot answers.
func inNewer(kind, subject string, p PinInfo) string {
	return fmt.Sprintf("no %s named %s is in snapshot %s, which this answer is from, but the newer snapshot %s has one: repeat with snapshot: %q to read it",
		kind, subject, p.SnapshotID, p.Current, SnapshotLatest)
}

// shallow is a compact output schema: the top-level fields and their
// types. The full shapes are documented in fleetgraph; repeating them in
// every tools/list would cost thousands of tokens.
func shallow(required []string, props map[string]string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Required: required}
	for name, typ := range props {
		s.Properties[name] = &jsonschema.Schema{Type: typ}
	}
	s.Properties["meta"] = &jsonschema.Schema{Type: "object"}
	s.Properties["pin"] = &jsonschema.Schema{Type: "object"}
	return s
}

// newFleetState builds the fleet: the given builder, or one populated
// from the sources with ctx (bounded by fleetLoadStall), whose local
// directories and target-state file are then watched until ctx is done.
// --oci sources and pacto_impact's oci:// refs use the server's one
// registry client (Options.Registry), so --plain-http and the credential
// and cache flags hold for them too.
func newFleetState(ctx context.Context, env *familyEnv) (*fleetState, error) {
	o := &env.opts.Fleet
	client := env.opts.Registry
	if client == nil && len(o.OCI) > 0 {
		c, err := oci.NewClient(nil)
		if err != nil {
			return nil, err
		}
		client = c
	}
	workspace := env.opts.Workspace
	if env.opts.FleetRefsOnly {
		workspace = "" // the loader reads revisions' own locations only
	}
	loader := o.Bundles
	if loader == nil {
		loader = source.NewRefLoader(&source.RefLoaderOptions{Workspace: workspace, Client: client, CacheBytes: env.opts.Budget.KeptBytes()})
	}
	f := &fleetState{
		b:         o.Builder,
		loader:    loader,
		stdio:     env.opts.Transport == TransportStdio,
		idle:      env.opts.SessionTimeout,
		pins:      map[*sdk.ServerSession]*pin{},
		scoper:    env.opts.Scoper,
		log:       env.log.WithName("fleet"),
		refsOnly:  env.opts.FleetRefsOnly,
		workspace: workspace,
	}
	var obs *fleetgraph.Observed
	if len(o.Traces) > 0 {
		var err error
		if obs, err = loadTraceFiles(o.Traces); err != nil {
			return nil, err
		}
		env.log.Info("Observed edges read", "files", len(o.Traces), "edges", obs.Len())
	}
	if f.b != nil {
		if obs != nil {
			f.b.SetObserved(obs)
			f.b.Flush()
		}
		return f, nil
	}
	f.b = fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Freshness: o.Freshness, Retention: o.Retention})
	if obs != nil {
		f.b.SetObserved(obs)
	}
	cctx, stall := newStallWatch(ctx, fleetLoadStall)
	var sources []source.Source
	for _, d := range o.Local {
		sources = append(sources, &source.LocalSource{Dir: filepath.Clean(d), Progress: stall.progress, CacheDir: o.CacheDir, Log: env.log.WithName("fleet")})
	}
	if len(o.OCI) > 0 {
		sources = append(sources, &source.OCISource{Refs: o.OCI, Client: client, Progress: stall.progress})
	}
	if o.TargetState != "" {
		sources = append(sources, &source.TargetStateSource{Path: o.TargetState})
	}
	feed := source.NewFeed(f.b, sources)
	restoreGC := func() {}
	if _, set := os.LookupEnv("GOGC"); !set {
		prev := debug.SetGCPercent(fleetLoadGCPercent)
		restoreGC = func() { debug.SetGCPercent(prev) }
	}
	snap := feed.Collect(cctx, nil)
	restoreGC()
	stalled := stall.stop()

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("collecting the fleet sources: %w", err)
	}
	sv, revs, tgts := snap.Counts()
	log := env.log
	log.Info("Fleet snapshot built", "snapshot", snap.ID(), "services", sv, "revisions", revs, "targets", tgts, "completeness", snap.Meta().Completeness)
	logSourceProblems(log, snap)
	if stalled != nil {
		log.Error(stalled, "Fleet sources stalled while the server started")
	}
	if len(o.Local) > 0 || o.TargetState != "" {
		env.background(func(ctx context.Context) {
			err := feed.Watch(ctx, &source.WatchOptions{Debounce: o.WatchDebounce, OnCollect: func(string) {
				cur := f.b.Current()
				sv, revs, tgts := cur.Counts()
				log.Info("Fleet snapshot updated", "snapshot", cur.ID(), "services", sv, "revisions", revs, "targets", tgts, "completeness", cur.Meta().Completeness)
				logSourceProblems(log, cur)
			}})
			if err != nil {
				log.Error(err, "Watching the fleet's local sources failed; they stay as they were last read")
			}
		})
	}
	return f, nil
}

// logSourceProblems logs every source that is not available, with the
// error agents see in meta.limitations, so a refused file is never only
// "targets: 0" in the log.
func logSourceProblems(log logr.Logger, snap *fleetgraph.Snapshot) {
	for _, st := range snap.Sources() {
		if st.Status == fleetgraph.SourceAvailable {
			continue
		}
		kv := []any{"source", st.ID, "status", st.Status}
		if st.Error != nil {
			kv = append(kv, "code", st.Error.Code, "error", st.Error.Message)
		}
		log.Info("Fleet source not fully available", kv...)
	}
}

// fleetFamily is the read-only queries over versioned fleet snapshots.
var fleetFamily = &family{
	name:    FamilyFleet,
	summary: "fleet — pacto_fleet_search, _get, _graph, _status and _explain query versioned, immutable fleet snapshots (services, contract revisions, targets, dependencies); pacto_impact projects a contract diff onto the fleet's dependents. All read-only. A session reads the snapshot of its first fleet call until a call passes snapshot: \"latest\", which moves the session to the newest one; a stateless request pins one with the snapshot argument or a cursor. Every answer carries meta (completeness, limitations, sources) and pin, and its text says when a newer snapshot exists",
	build: func(ctx context.Context, env *familyEnv) (*familyParts, error) {
		f, err := newFleetState(ctx, env)
		if err != nil {
			return nil, err
		}
		env.fleet = f.b
		tools, err := f.tools()
		if err != nil {
			return nil, err
		}
		return &familyParts{tools: tools}, nil
	},
}

// tools builds the fleet family's tools.
func (f *fleetState) tools() ([]*tool, error) {
	ro := hints{readOnly: true, idempotent: true}
	var tools []*tool
	add := func(t *tool, err error, out *jsonschema.Schema) error {
		if err != nil {
			return err
		}
		t.output = out
		withPinNote(t)
		tools = append(tools, t)
		return nil
	}
	t, err := newTool(toolSpec{
		name: "pacto_fleet_search", title: "Search the fleet", hints: ro,
		description: "List services matching filters, sorted by key, a page at a time. Target filters (compliance, scope, labels) hold on one target.",
		input:       enumInput[fleetSearchArgs](map[string][]any{"status": statusEnum(), "compliance": statusEnum(), "workload": {"service", "job", "scheduled"}}),
	}, func(ctx context.Context, in fleetSearchArgs) (*fleetSearchOut, string, error) {
		snap, p, err := f.snapshotFor(ctx, in.Snapshot, in.Cursor)
		if err != nil {
			return nil, "", err
		}
		res, err := snap.Search(fleetgraph.SearchQuery{Text: in.Text, Owner: in.Owner, Status: fleetgraph.Status(in.Status), Compliance: fleetgraph.Status(in.Compliance),
			Source: in.Source, Scope: in.Scope, Workload: in.Workload, HasCapability: in.HasCapability, HasDependency: in.HasDependency,
			Ready: in.Ready, NotReady: in.NotReady, Labels: in.Labels, Limit: in.Limit, Cursor: in.Cursor})
		if err != nil {
			return nil, "", queryToolError(err)
		}
		return &fleetSearchOut{res, p}, fmt.Sprintf("%d of %d services (snapshot %s, %s)%s.", res.Count, res.Total, p.SnapshotID, res.Meta.Completeness, more(res.Truncated)), nil
	})
	if err := add(t, err, shallow([]string{"meta", "total", "count", "services", "truncated"}, map[string]string{"total": "integer", "count": "integer", "services": "array", "nextCursor": "string", "truncated": "boolean"})); err != nil {
		return nil, err
	}
	t, err = newTool(toolSpec{
		name: "pacto_fleet_get", title: "Get a fleet service or target", hints: ro,
		description: "One service (revisions, targets, dependencies, dependents) or one target (with its linked revision). A miss: found:false with candidates.",
	}, func(ctx context.Context, in fleetGetArgs) (*fleetGetOut, string, error) {
		snap, p, err := f.snapshotFor(ctx, in.Snapshot, "")
		if err != nil {
			return nil, "", err
		}
		q := fleetgraph.GetQuery{Service: in.Service, Target: in.Target}
		res, err := snap.Get(q)
		if err != nil {
			return nil, "", queryToolError(err)
		}
		if !res.Found && f.newerHas(ctx, p, func(s *fleetgraph.Snapshot) bool { r, err := s.Get(q); return err == nil && r.Found }) {
			res.Reason, res.Candidates = inNewer(res.Kind, res.Subject, p), nil
		}
		return &fleetGetOut{res, p}, found(res.Found, res.Kind, res.Subject, res.Reason, res.Candidates), nil
	})
	if err := add(t, err, shallow([]string{"meta", "found"}, map[string]string{"found": "boolean", "candidates": "array", "service": "object", "revisions": "array", "targets": "array", "dependencies": "array", "dependents": "array", "target": "object", "revision": "object"})); err != nil {
		return nil, err
	}
	t, err = newTool(toolSpec{
		name: "pacto_fleet_graph", title: "Walk the fleet dependency graph", hints: ro,
		description: "Dependencies or dependents of a service, revision or target: nodes, edges, cycles, unresolved; truncated at max_nodes.",
		input:       enumInput[fleetGraphArgs](map[string][]any{"direction": {"dependencies", "dependents"}}),
	}, func(ctx context.Context, in fleetGraphArgs) (*fleetGraphOut, string, error) {
		snap, p, err := f.snapshotFor(ctx, in.Snapshot, in.Cursor)
		if err != nil {
			return nil, "", err
		}
		q := fleetgraph.GraphQuery{Service: in.Service, Revision: in.Revision, Target: in.Target, Direction: in.Direction,
			Transitive: in.Transitive, MaxDepth: in.MaxDepth, MaxNodes: in.MaxNodes, MaxBytes: in.MaxBytes, Cursor: in.Cursor, IncludeObserved: in.IncludeObserved}
		res, err := snap.Graph(q)
		if err != nil {
			return nil, "", queryToolError(err)
		}
		if !res.Found && f.newerHas(ctx, p, func(s *fleetgraph.Snapshot) bool { r, err := s.Graph(q); return err == nil && r.Found }) {
			kind, name := "service", in.Service
			if in.Revision != "" {
				kind, name = "revision", in.Revision
			} else if in.Target != "" {
				kind, name = "target", in.Target
			}
			res.Reason, res.Candidates = inNewer(kind, name, p), nil
		}
		if !res.Found {
			return &fleetGraphOut{res, p}, found(false, "root", res.Root, res.Reason, res.Candidates), nil
		}
		return &fleetGraphOut{res, p}, graphText(res), nil
	})
	if err := add(t, err, shallow([]string{"meta", "found"}, map[string]string{"found": "boolean", "root": "string", "nodes": "array", "edges": "array", "cycles": "array", "unresolved": "array", "truncated": "boolean"})); err != nil {
		return nil, err
	}
	t, err = newTool(toolSpec{
		name: "pacto_fleet_status", title: "What needs attention in the fleet", hints: ro,
		description: "Items needing attention, by code then name; categories lists those evaluated.",
	}, func(ctx context.Context, in fleetStatusArgs) (*fleetStatusOut, string, error) {
		snap, p, err := f.snapshotFor(ctx, in.Snapshot, in.Cursor)
		if err != nil {
			return nil, "", err
		}
		res, err := snap.Status(fleetgraph.StatusQuery{NeedsAttention: in.NeedsAttention, NonCompliant: in.NonCompliant, Unknown: in.Unknown, Invalid: in.Invalid,
			Stale: in.Stale, MissingReadiness: in.MissingReadiness, UnresolvedDeps: in.UnresolvedDeps, Limit: in.Limit, Cursor: in.Cursor, MaxBytes: in.MaxBytes})
		if err != nil {
			return nil, "", queryToolError(err)
		}
		return &fleetStatusOut{res, p}, statusText(res), nil
	})
	if err := add(t, err, shallow([]string{"meta", "categories", "items"}, map[string]string{"categories": "array", "total": "integer", "count": "integer", "items": "array", "nextCursor": "string", "truncated": "boolean"})); err != nil {
		return nil, err
	}
	t, err = newTool(toolSpec{
		name: "pacto_fleet_explain", title: "Explain a fleet status", hints: ro,
		description: "Why a service or target has its status: findings, missing or stale evidence, unlinked targets, unresolved dependencies.",
	}, func(ctx context.Context, in fleetExplainArgs) (*fleetExplainOut, string, error) {
		snap, p, err := f.snapshotFor(ctx, in.Snapshot, "")
		if err != nil {
			return nil, "", err
		}
		q := fleetgraph.ExplainQuery{Subject: in.Subject}
		res, err := snap.Explain(q)
		if err != nil {
			return nil, "", queryToolError(err)
		}
		if !res.Found && f.newerHas(ctx, p, func(s *fleetgraph.Snapshot) bool { r, err := s.Explain(q); return err == nil && r.Found }) {
			res.Reason, res.Candidates = inNewer("service or target", res.Subject, p), nil
		}
		if !res.Found {
			return &fleetExplainOut{res, p}, found(false, "subject", res.Subject, res.Reason, res.Candidates), nil
		}
		return &fleetExplainOut{res, p}, fmt.Sprintf("%s %s is %s: %d reason(s).", res.Kind, res.Key, res.Status, len(res.Reasons)), nil
	})
	if err := add(t, err, shallow([]string{"meta", "found"}, map[string]string{"found": "boolean", "kind": "string", "status": "string", "reasons": "array", "candidates": "array"})); err != nil {
		return nil, err
	}
	impactDesc, impactIn := impactSpec(f.refsOnly)
	t, err = newTool(toolSpec{
		name: "pacto_impact", title: "Impact of a contract change", hints: hints{readOnly: true, idempotent: true, openWorld: f.loader.UsesRegistry()},
		description: impactDesc, input: impactIn,
	}, func(ctx context.Context, in impactArgs) (*impactOut, string, error) {
		var callObs *fleetgraph.Observed
		if in.Traces != "" {
			if callObs, err = f.callTraces(in.Traces); err != nil {
				return nil, "", err
			}
		}
		snap, p, err := f.snapshotFor(ctx, in.Snapshot, in.Cursor)
		if err != nil {
			return nil, "", err
		}
		older, err := f.impactRef(ctx, snap, "old_ref", in.OldRef)
		if err != nil {
			return nil, "", err
		}
		newer, err := f.impactRef(ctx, snap, "new_ref", in.NewRef)
		if err != nil {
			return nil, "", err
		}
		if o, n := older.Contract.Service.Name, newer.Contract.Service.Name; o != n {
			// Consumers are found by the service's name: the new name's
			// would be listed, and the old name's, whom a rename breaks,
			// would not; an answer of "no consumer at risk" would be wrong.
			return nil, "", &ToolError{Code: CodeInvalidArgument, Field: "new_ref",
				Message: fmt.Sprintf("old_ref is a revision of service %s and new_ref of service %s: pacto_impact compares two revisions of one service. Renaming %s breaks every consumer of it, which finds it by name: pacto_fleet_graph with service %s and direction dependents lists them", o, n, o, o)}
		}
		res, err := snap.Impact(ctx, older, newer, &fleetgraph.ImpactOptions{IncludeObserved: in.IncludeObserved, Observed: callObs, MaxBytes: in.MaxBytes, Cursor: in.Cursor})
		if errors.Is(err, fleetgraph.ErrNoContract) {
			return nil, "", &ToolError{Code: CodeNotComparable, Message: err.Error()}
		}
		var qe *fleetgraph.QueryError
		if errors.As(err, &qe) {
			return nil, "", queryToolError(err)
		}
		if err != nil {
			return nil, "", err
		}
		return &impactOut{res, p}, res.Headline(), nil
	})
	if t != nil {
		t.expensive = true // reads two bundles and diffs them
	}
	if err := add(t, err, shallow([]string{"meta", "classification", "consumers"}, map[string]string{"service": "string", "inFleet": "boolean", "classification": "string", "breakingChanges": "array", "potentiallyBreakingChanges": "array", "nonBreakingChanges": "array",
		"versionBump": "object", "consumers": "array", "atRisk": "array", "activeTargets": "array"})); err != nil {
		return nil, err
	}
	return tools, nil
}

// fleetDependencies lets the authoring tools resolve dependency refs
// against the fleet's current snapshot (authoring.Dependencies); nil when
// the fleet family is off, so refs stay as given.
func (e *familyEnv) fleetDependencies() authoring.Dependencies {
	// With a Scoper, the authoring tools resolve nothing against the fleet:
	// they have no caller to scope by, and must not reveal what is hidden.
	if !e.enabled(FamilyFleet) || e.opts.Scoper != nil {
		return nil
	}
	return fleetDependencies{e}
}

type fleetDependencies struct{ env *familyEnv }

// Dependency implements authoring.Dependencies. The fleet is built after
// the authoring family, and read at call time.
func (d fleetDependencies) Dependency(name string) (authoring.KnownDependency, []string, bool) {
	b := d.env.fleet
	if b == nil {
		return authoring.KnownDependency{}, nil, false
	}
	e, miss := b.Current().Dependency(name)
	if e == nil {
		return authoring.KnownDependency{}, miss.Candidates, false
	}
	return authoring.KnownDependency{Ref: e.Ref, Compatibility: e.Compatibility, Version: e.Version}, nil, true
}

func fieldError(err error, field string) error {
	var te *ToolError
	if errors.As(err, &te) && te.Field == "" {
		te.Field = field
	}
	return err
}

func statusEnum() []any {
	var out []any
	for _, s := range fleetgraph.Statuses() {
		out = append(out, string(s))
	}
	return out
}

// enumInput infers an input schema and adds enums.
func enumInput[T any](enums map[string][]any) *jsonschema.Schema {
	s := itemSchema[T](enums)
	return s
}

// graphText is a graph answer's line: what this page lists, what the
// whole walk holds, and what was left out and how to read it.
func graphText(res *fleetgraph.GraphResult) string {
	var b strings.Builder
	observed := ""
	if res.Observed != nil {
		observed = fmt.Sprintf(", %d observed", len(res.Observed))
	}
	fmt.Fprintf(&b, "%d nodes, %d edges%s, %d cycles, %d unresolved from %s (%s)", len(res.Nodes), len(res.Edges), observed, len(res.Cycles), len(res.Unresolved), res.Root, res.Direction)
	if res.Remaining != nil || len(res.Nodes) < res.Total.Nodes {
		fmt.Fprintf(&b, "; the walk holds %s", res.Total)
	}
	if len(res.ByDepth) > 1 {
		b.WriteString(", by depth")
		for _, d := range res.ByDepth[1:] {
			fmt.Fprintf(&b, " %d:%d", d.Depth, d.Count)
		}
	}
	if res.Truncated {
		b.WriteString("; the walk stopped at max_nodes (raise it or lower max_depth)")
	}
	if res.Remaining != nil {
		fmt.Fprintf(&b, "; left out to stay within the byte budget: %s, nearest first; repeat the call with cursor set to nextCursor for them (or raise max_bytes)", res.Remaining)
	}
	return b.String() + "."
}

// statusText is a status answer's line, with the counts by code and what
// later pages hold.
func statusText(res *fleetgraph.StatusResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d items need attention (%d categories evaluated)", res.Count, res.Total, len(res.Categories))
	if len(res.ByCode) > 0 {
		b.WriteString(":")
		for i, code := range slices.Sorted(maps.Keys(res.ByCode)) {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %d %s", res.ByCode[code], code)
		}
	}
	if res.Observed != nil {
		fmt.Fprintf(&b, "; %d observed-edge flag(s)", len(res.Observed.Flags))
	}
	if res.NextCursor != "" {
		b.WriteString("; the page ends at limit or at the byte budget: repeat the call with cursor set to nextCursor for the rest")
	}
	return b.String() + "."
}

func more(truncated bool) string {
	if truncated {
		return "; more with nextCursor"
	}
	return ""
}

// found is the text of a get, graph or explain answer. A miss names its
// did-you-mean candidates in the text too, for clients that show only it.
func found(ok bool, kind, subject, reason string, candidates []string) string {
	if ok {
		return fmt.Sprintf("Found %s %s.", kind, subject)
	}
	msg := "Not found: " + reason
	if len(candidates) > 0 {
		msg += "; did you mean " + strings.Join(candidates, ", ") + "?"
	}
	return msg + " (found:false; see candidates and meta.completeness)."
}

// stallWatch cancels a context when no progress has been reported for a
// whole period: it looks once a period, so a stall ends the context
// between one and two periods after the last progress.
type stallWatch struct {
	ctx    context.Context
	period time.Duration
	cancel context.CancelCauseFunc
	ticks  atomic.Uint64 // progress reported so far
	seen   uint64        // ticks at the last look (the looking goroutine's)
	done   chan struct{}
	once   sync.Once
}

// errFleetLoadStalled is the cause of a start the stall bound ended.
type errFleetLoadStalled struct{ period time.Duration }

// Unwrap makes the stall a deadline, as the sources' failures classify it.
func (e errFleetLoadStalled) Unwrap() error { return context.DeadlineExceeded }

func (e errFleetLoadStalled) Error() string {
	return fmt.Sprintf("the fleet sources made no progress for %s while the server started (no bundle read, no OCI reference loaded); a source it ended is left out until it is read again (a local directory on its next change); check that the directories' file system and the registry answer", e.period)
}

func newStallWatch(ctx context.Context, period time.Duration) (context.Context, *stallWatch) {
	cctx, cancel := context.WithCancelCause(ctx)
	w := &stallWatch{ctx: cctx, period: period, cancel: cancel, done: make(chan struct{})}
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if w.look() {
					return
				}
			case <-w.done:
				return
			case <-cctx.Done():
				return
			}
		}
	}()
	return cctx, w
}

// progress records that a source moved on; safe from any goroutine.
func (w *stallWatch) progress() { w.ticks.Add(1) }

// look is one period's check: it cancels the context, and reports true,
// when nothing progressed since the last look.
func (w *stallWatch) look() bool {
	n := w.ticks.Load()
	if n == w.seen {
		w.cancel(errFleetLoadStalled{w.period})
		return true
	}
	w.seen = n
	return false
}

// stop ends the watch and releases its context, the collection being
// over; it returns the stall error when the watch ended the context.
func (w *stallWatch) stop() error {
	w.once.Do(func() {
		close(w.done)
		w.cancel(nil)
	})
	var st errFleetLoadStalled
	if errors.As(context.Cause(w.ctx), &st) {
		return st
	}
	return nil
}
