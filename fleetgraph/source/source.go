package source

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/opencontainers/go-digest"
	"go.yaml.in/yaml/v3"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
)

// Source kinds.
const (
	KindLocal       = "local"
	KindOCI         = "oci"
	KindTargetState = "target-state"
)

// Source contributes records to the fleet. Collect returns everything the
// source holds now; an error means the source is unavailable (never
// empty).
type Source interface {
	ID() string
	Kind() string
	Collect(ctx context.Context) (*Collection, error)
}

// Collection is what one Collect returned.
type Collection struct {
	Revisions   []*fleetgraph.Revision
	Targets     []*fleetgraph.Target
	Limitations []fleetgraph.Limitation
	// Partial says some records could not be read; Limitations say which.
	Partial bool
	// Status overrides the source's status (a fixture may declare itself
	// partial or unavailable).
	Status string
}

// Feed keeps a Builder in step with a fixed set of sources. Each Collect
// re-reads some of them and hands the Builder only the difference: every
// record a source holds now is upserted (an unchanged one publishes
// nothing new), and every record no source holds any more is deleted —
// the same upserts and deletes an informer produces. It is safe for
// concurrent use.
type Feed struct {
	b       *fleetgraph.Builder
	sources []Source

	mu    sync.Mutex
	state []fedState // per source, by index
}

// fedState is what one source last contributed.
type fedState struct {
	st      fleetgraph.SourceState
	lims    []fleetgraph.Limitation
	records map[string]struct{} // "r"+revision key, "t"+target key
	ok      bool                // collected successfully at least once
}

// NewFeed returns a Feed of sources into b. Nothing is read until Collect.
func NewFeed(b *fleetgraph.Builder, sources []Source) *Feed {
	return &Feed{b: b, sources: slices.Clone(sources), state: make([]fedState, len(sources))}
}

// Collect re-reads the sources for which pick returns true (nil: all of
// them) concurrently, with ctx, feeds the difference to the Builder and
// publishes. A source that fails is unavailable, with a sanitised error;
// the records of its last successful read are kept (and a limitation says
// so), so a file caught half-written does not empty the fleet. Sources
// sharing an id are one entry, as available as the least available of
// them, with a DUPLICATE_SOURCE_ID limitation.
func (f *Feed) Collect(ctx context.Context, pick func(Source) bool) *fleetgraph.Snapshot {
	type out struct {
		c   *Collection
		err error
	}
	results := make([]*out, len(f.sources))
	var wg sync.WaitGroup
	for i, src := range f.sources {
		if pick != nil && !pick(src) {
			continue
		}
		results[i] = &out{}
		wg.Go(func() {
			results[i].c, results[i].err = src.Collect(ctx)
		})
	}
	wg.Wait()

	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.b.Now().UTC()
	conflicts := documentConflicts(f.sources, func(i int) *Collection {
		if r := results[i]; r != nil && r.err == nil {
			return r.c
		}
		return nil
	})
	for i, src := range f.sources {
		r := results[i]
		if r == nil {
			continue
		}
		prev := f.state[i]
		st := fleetgraph.SourceState{ID: src.ID(), Kind: src.Kind(), Status: fleetgraph.SourceAvailable, ObservedAt: now}
		if r.err != nil {
			st.Status, st.Error = fleetgraph.SourceUnavailable, sourceError(r.err)
			st.LastSuccessfulSync = prev.st.LastSuccessfulSync
			var lims []fleetgraph.Limitation
			if len(prev.records) > 0 {
				lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitSourceUnavailable, Source: st.ID,
					Message: fmt.Sprintf("source %s keeps the %d records of its last successful read at %s until it can be read again", st.ID, len(prev.records), prev.st.LastSuccessfulSync.Format(time.RFC3339))})
			}
			f.state[i] = fedState{st: st, lims: lims, records: prev.records, ok: prev.ok}
			continue
		}
		st.LastSuccessfulSync = now
		if r.c.Partial {
			st.Status = fleetgraph.SourcePartial
		}
		if r.c.Status != "" {
			st.Status = r.c.Status
		}
		lims := slices.Clone(r.c.Limitations)
		records := map[string]struct{}{}
		dropped := false
		for _, rev := range r.c.Revisions {
			rev.Source = st.ID
			if c, ok := conflicts[rev.Key()]; ok {
				lims = append(lims, c.limitation(st.ID))
				dropped = true
				if c.keep != i {
					continue // the other source's document is the one kept
				}
			}
			if err := f.b.UpsertRevision(rev); err != nil {
				lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitIdentityUnresolved, Message: err.Error(), Source: st.ID})
				dropped = true
				continue
			}
			records["r"+rev.Key()] = struct{}{}
		}
		for _, t := range r.c.Targets {
			t.Source = st.ID
			if err := f.b.UpsertTarget(t); err != nil {
				lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitRecordInvalid, Message: err.Error(), Source: st.ID})
				dropped = true
				continue
			}
			records["t"+t.Key()] = struct{}{}
		}
		if dropped && st.Status == fleetgraph.SourceAvailable {
			// A source that could not deliver a record is partial: an
			// absent service is then never read as proof of absence.
			st.Status = fleetgraph.SourcePartial
		}
		f.state[i] = fedState{st: st, lims: lims, records: records, ok: true}
		for k := range prev.records {
			if _, kept := records[k]; !kept && !f.heldElsewhere(i, k) {
				if k[0] == 'r' {
					f.b.DeleteRevision(k[1:])
				} else {
					f.b.DeleteTarget(k[1:])
				}
			}
		}
	}
	f.publishStates()
	return f.b.Flush()
}

// heldElsewhere reports whether a source other than i still holds the
// record. Caller holds mu.
func (f *Feed) heldElsewhere(i int, key string) bool {
	for j := range f.state {
		if _, ok := f.state[j].records[key]; ok && j != i {
			return true
		}
	}
	return false
}

// publishStates hands the Builder one state per source id. Caller holds
// mu.
func (f *Feed) publishStates() {
	type merged struct {
		st   fleetgraph.SourceState
		lims []fleetgraph.Limitation
		n    int
	}
	byID := map[string]*merged{}
	var ids []string
	for i := range f.sources {
		fs := f.state[i]
		if fs.st.ID == "" {
			continue // never collected: not reported until it is
		}
		m, dup := byID[fs.st.ID]
		if !dup {
			byID[fs.st.ID] = &merged{st: fs.st, lims: slices.Clone(fs.lims), n: 1}
			ids = append(ids, fs.st.ID)
			continue
		}
		m.n++
		m.st = mergeStates(m.st, fs.st)
		m.lims = append(m.lims, fs.lims...)
	}
	for _, id := range ids {
		m := byID[id]
		if m.n > 1 {
			m.lims = sortedLimitations(m.lims)
			m.lims = append(m.lims, fleetgraph.Limitation{Code: fleetgraph.LimitDuplicateSourceID, Source: id,
				Message: fmt.Sprintf("%d sources have the id %s: they are one entry, as available as the least available of them, holding the records of all; give each source a distinct directory or file name", m.n, id)})
		}
		f.b.SetSource(m.st, m.lims...)
	}
}

// sourceRank orders source statuses, least available first.
func sourceRank(status string) int {
	switch status {
	case fleetgraph.SourceUnavailable:
		return 0
	case fleetgraph.SourcePartial:
		return 1
	case fleetgraph.SourceStale:
		return 2
	default:
		return 3
	}
}

// mergeStates merges two sources with one id: the less available status
// (and its error) wins, so an unavailable source is never hidden by a
// duplicate; between equals the smaller error wins, so the order the
// sources were given in does not matter.
func mergeStates(a, b fleetgraph.SourceState) fleetgraph.SourceState {
	synced := a.LastSuccessfulSync
	if synced.IsZero() {
		synced = b.LastSuccessfulSync
	}
	out := b
	if ra, rb := sourceRank(a.Status), sourceRank(b.Status); ra < rb || (ra == rb && errorKey(a.Error) <= errorKey(b.Error)) {
		out = a
	}
	out.LastSuccessfulSync = synced
	return out
}

func errorKey(e *fleetgraph.SourceError) string {
	if e == nil {
		return ""
	}
	return e.Code + "\x00" + e.Message
}

// sortedLimitations sorts and de-duplicates the limitations of merged
// sources: the same directory scanned twice reports each gap twice.
func sortedLimitations(lims []fleetgraph.Limitation) []fleetgraph.Limitation {
	slices.SortFunc(lims, func(x, y fleetgraph.Limitation) int {
		return strings.Compare(x.Code+"\x00"+x.Subject+"\x00"+x.Message+"\x00"+x.Source, y.Code+"\x00"+y.Subject+"\x00"+y.Message+"\x00"+y.Source)
	})
	return slices.Compact(lims)
}

// sourceError keeps a fixture's own parse message (it names only a line
// and a field) and sanitises everything else.
func sourceError(err error) *fleetgraph.SourceError {
	var fe *FixtureError
	if errors.As(err, &fe) {
		return &fleetgraph.SourceError{Code: fleetgraph.ErrInvalid, Message: fe.Error()}
	}
	return fleetgraph.SanitizeError(err)
}

// Local scan bounds.
const (
	DefaultScanDepth = 8
	maxGapsListed    = 10
)

// LocalSource scans a directory for bundles: every directory holding a
// pacto.yaml, down to MaxDepth levels, skipping hidden directories, vendor
// and node_modules, and not descending into a bundle.
type LocalSource struct {
	Dir      string
	MaxDepth int // default 8
	// Limits bound each bundle, as in bundle.LoadOptions.
	Load *bundle.LoadOptions
	// Progress, when set, is called after each bundle directory has been
	// read (loaded or left out), from the loading workers: a caller can
	// bound how long the source goes without progress rather than how long
	// a large directory takes in all.
	Progress func()

	// CacheDir, when set, is the directory of the source's cache file
	// (one per Dir; see cache.go): each bundle's identity and verdict by
	// the digest of its content, so a start over unchanged bundles
	// neither compresses nor validates them. Empty: no file; a re-read
	// still reuses the last read's.
	CacheDir string
	// Log receives the one line said when the cache file is not used
	// (unreadable, corrupt, of another build) or cannot be written; the
	// source goes on without it. The zero value discards.
	Log logr.Logger

	// known are the identities and verdicts of the last successful
	// Collect (or, before the first, of the cache file), by bundle
	// content: a re-read (Watch re-collects the whole directory after any
	// change) compresses and validates only the bundles whose content
	// changed. It holds the current bundles' only.
	known     atomic.Pointer[map[digest.Digest]cached]
	cacheOnce sync.Once
}

// knownBundles is what the last Collect learned, else the cache file's.
func (l *LocalSource) knownBundles() map[digest.Digest]cached {
	if l.CacheDir != "" {
		l.cacheOnce.Do(func() {
			path := cachePath(l.CacheDir, l.Dir)
			m, err := readCache(path, l.Dir)
			if err != nil {
				l.Log.Info("Fleet cache file ignored; every bundle is validated again", "file", path, "reason", err.Error())
				return
			}
			if m != nil {
				l.known.CompareAndSwap(nil, &m)
			}
		})
	}
	if p := l.known.Load(); p != nil {
		return *p // read only: a finished Collect's, or the file's
	}
	return nil
}

// ID implements Source.
func (l *LocalSource) ID() string { return "local:" + l.Dir }

// Kind implements Source.
func (l *LocalSource) Kind() string { return KindLocal }

// Collect implements Source.
func (l *LocalSource) Collect(ctx context.Context) (*Collection, error) {
	dirs, gaps, err := ScanDir(l.Dir, l.MaxDepth)
	if err != nil {
		return nil, err
	}
	c := &Collection{}
	for i, g := range gaps {
		if i == maxGapsListed {
			c.Limitations = append(c.Limitations, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: l.ID(), Message: fmt.Sprintf("and %d more unreadable directories", len(gaps)-maxGapsListed)})
			break
		}
		c.Limitations = append(c.Limitations, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: l.ID(), Message: "directory " + g + " could not be read"})
	}
	c.Partial = len(gaps) > 0
	// Bundles load and validate independently: one worker a CPU, the
	// results taken in directory order, so the collection is the one a
	// single loop makes.
	type loaded struct {
		rev     *fleetgraph.Revision
		content digest.Digest
		err     error
	}
	out := make([]loaded, len(dirs))
	known := l.knownBundles()
	var lopts bundle.LoadOptions
	if l.Load != nil {
		lopts = *l.Load
	}
	lopts.KnownIdentity = func(c digest.Digest) digest.Digest { return known[c].identity }
	var misses atomic.Int64
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(dirs)) {
		wg.Go(func() {
			for i := range next {
				b, err := bundle.LoadDir(dirs[i], &lopts)
				if err == nil {
					k, hit := known[b.Content]
					if !hit {
						misses.Add(1)
					}
					out[i].content = b.Content
					out[i].rev, err = fleetgraph.NewRevision(ctx, b, &fleetgraph.RevisionOptions{Validate: true, Verdict: k.verdict})
				}
				out[i].err = err
				if l.Progress != nil {
					l.Progress()
				}
			}
		})
	}
	for i := range dirs {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	now := make(map[digest.Digest]cached, len(dirs))
	for i, d := range dirs {
		if out[i].err == nil {
			c.Revisions = append(c.Revisions, out[i].rev)
			if v := out[i].rev.Verdict(); v != nil {
				now[out[i].content] = cached{identity: digest.Digest(out[i].rev.Digest), verdict: v}
			}
			continue
		}
		rel, _ := filepath.Rel(l.Dir, d)
		c.Partial = true
		c.Limitations = append(c.Limitations, fleetgraph.Limitation{Code: fleetgraph.LimitRecordInvalid, Source: l.ID(), Subject: filepath.ToSlash(rel), Message: "bundle " + filepath.ToSlash(rel) + " was left out: " + firstLine(out[i].err.Error())})
	}
	l.known.Store(&now)
	if l.CacheDir != "" && (misses.Load() > 0 || len(now) != len(known)) {
		path := cachePath(l.CacheDir, l.Dir)
		if err := writeCache(path, l.Dir, now); err != nil {
			l.Log.Info("Fleet cache file not written; the next start validates every bundle again", "file", path, "reason", err.Error())
		}
	}
	return c, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// ScanDir lists the bundle directories below root (sorted), and the
// directories it could not read.
func ScanDir(root string, maxDepth int) (bundles, gaps []string, err error) {
	if maxDepth <= 0 {
		maxDepth = DefaultScanDepth
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, nil, err
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", root)
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if _, err := os.Stat(filepath.Join(dir, contract.FileName)); err == nil {
			bundles = append(bundles, dir)
			return
		}
		if depth >= maxDepth {
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			gaps = append(gaps, dir)
			return
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules" {
				continue
			}
			walk(filepath.Join(dir, name), depth+1)
		}
	}
	walk(root, 0)
	slices.Sort(bundles)
	return bundles, gaps, nil
}

// OCISource loads exactly the references given.
type OCISource struct {
	Refs   []string
	Client *oci.Client
	// Progress, when set, is called after each reference has been
	// loaded or has failed.
	Progress func()
}

// ID implements Source.
func (o *OCISource) ID() string { return "oci" }

// Kind implements Source.
func (o *OCISource) Kind() string { return KindOCI }

// Collect implements Source: a reference that fails is a limitation, and
// all of them failing makes the source unavailable.
func (o *OCISource) Collect(ctx context.Context) (*Collection, error) {
	c := &Collection{}
	var firstErr error
	for _, ref := range o.Refs {
		rev, err := o.load(ctx, ref)
		if o.Progress != nil {
			o.Progress()
		}
		if err == nil {
			c.Revisions = append(c.Revisions, rev)
			continue
		}
		if firstErr == nil {
			firstErr = err
		}
		se := fleetgraph.SanitizeError(err)
		c.Partial = true
		c.Limitations = append(c.Limitations, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: o.ID(), Subject: ref, Message: ref + ": " + se.Code + ": " + se.Message})
	}
	if len(c.Revisions) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return c, nil
}

// load reads one reference and makes its revision, validated.
func (o *OCISource) load(ctx context.Context, ref string) (*fleetgraph.Revision, error) {
	b, err := bundle.Load(ctx, ref, &bundle.LoadOptions{Client: o.Client})
	if err != nil {
		return nil, err
	}
	return fleetgraph.NewRevision(ctx, b, &fleetgraph.RevisionOptions{Validate: true})
}

// Target-state file bounds: sized for the fleet kubepact aims at (30k
// targets and more; a target takes about 250 bytes of YAML). A file past
// either bound is refused whole, with an error naming the bound, never
// truncated.
const (
	TargetStateSchema = "pacto.dev/fleet-targets/v1"
	MaxFixtureTargets = 100_000
	maxFixtureBytes   = 64 << 20
)

// FixtureError is a target-state file that does not decode; its message
// says where and why, and is shown to agents.
type FixtureError struct {
	File    string
	Message string
}

func (e *FixtureError) Error() string { return e.File + ": " + e.Message }

// TargetStateSource reads targets from a pacto.dev/fleet-targets/v1 file.
type TargetStateSource struct {
	Path string
}

// ID implements Source.
func (t *TargetStateSource) ID() string { return "target-state:" + filepath.Base(t.Path) }

// Kind implements Source.
func (t *TargetStateSource) Kind() string { return KindTargetState }

// Collect implements Source. Only a regular file (or a symlink to one)
// is read: a FIFO or a device would block start-up or never end, so it is
// refused with an error, and opened non-blocking so that one swapped in
// after the check cannot hang either.
func (t *TargetStateSource) Collect(context.Context) (*Collection, error) {
	notRegular := func(m os.FileMode) error {
		return &FixtureError{File: filepath.Base(t.Path), Message: fmt.Sprintf("is a %s, not a regular file: a target state is read only from a regular file (or a symlink to one)", bundle.FileKind(m))}
	}
	if st, err := os.Stat(t.Path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(st.Mode())
	}
	f, err := os.OpenFile(t.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(st.Mode())
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxFixtureBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxFixtureBytes {
		return nil, &FixtureError{File: filepath.Base(t.Path), Message: fmt.Sprintf("larger than %d MiB: the whole file is refused; split the fleet over several files or sources", maxFixtureBytes>>20)}
	}
	targets, status, err := DecodeTargetState(raw)
	if err != nil {
		return nil, &FixtureError{File: filepath.Base(t.Path), Message: err.Error()}
	}
	return &Collection{Targets: targets, Status: status}, nil
}

type fixtureFile struct {
	SchemaVersion string          `yaml:"schemaVersion"`
	Targets       []fixtureTarget `yaml:"targets"`
	State         *struct {
		Status  string `yaml:"status"`
		Message string `yaml:"message"`
	} `yaml:"state"`
}

type fixtureTarget struct {
	Scope        string            `yaml:"scope"`
	Kind         string            `yaml:"kind"`
	Name         string            `yaml:"name"`
	Service      string            `yaml:"service"`
	Labels       map[string]string `yaml:"labels"`
	RequestedRef string            `yaml:"requestedRef"`
	ResolvedRef  string            `yaml:"resolvedRef"`
	Digest       string            `yaml:"digest"`
	Compliance   string            `yaml:"compliance"`
	Coverage     *struct {
		Evaluated int `yaml:"evaluated"`
		Required  int `yaml:"required"`
	} `yaml:"coverage"`
	EvidenceAt      *time.Time `yaml:"evidenceAt"`
	ReconciledAt    *time.Time `yaml:"reconciledAt"`
	ObservedRuntime any        `yaml:"observedRuntime"`
	Findings        []struct {
		Code        string `yaml:"code"`
		Severity    string `yaml:"severity"`
		Category    string `yaml:"category"`
		SubjectKind string `yaml:"subjectKind"`
		SubjectName string `yaml:"subjectName"`
		Message     string `yaml:"message"`
	} `yaml:"findings"`
}

// DecodeTargetState decodes a target-state fixture strictly: one document,
// known fields only, the v1 schema, at most 5000 targets, service and name
// on every target, canonical compliance values. It returns the targets and
// the state the file declares for itself.
func DecodeTargetState(raw []byte) ([]*fleetgraph.Target, string, error) {
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var f fixtureFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, "", errors.New("the file is empty")
		}
		return nil, "", fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, "", errors.New("want exactly one YAML document")
	}
	if f.SchemaVersion != TargetStateSchema {
		return nil, "", fmt.Errorf("schemaVersion %q: want %s", f.SchemaVersion, TargetStateSchema)
	}
	if len(f.Targets) > MaxFixtureTargets {
		return nil, "", fmt.Errorf("%d targets: at most %d are accepted in one file, so the whole file is refused; split it over several files or sources", len(f.Targets), MaxFixtureTargets)
	}
	status := ""
	if f.State != nil && f.State.Status != "" {
		switch f.State.Status {
		case fleetgraph.SourceAvailable, fleetgraph.SourcePartial, fleetgraph.SourceStale, fleetgraph.SourceUnavailable:
			status = f.State.Status
		default:
			return nil, "", fmt.Errorf("state.status %q: want available, partial, stale or unavailable", f.State.Status)
		}
	}
	out := make([]*fleetgraph.Target, 0, len(f.Targets))
	seen := map[string]int{}
	for i, ft := range f.Targets {
		at := fmt.Sprintf("targets[%d]", i)
		if ft.Service == "" || ft.Name == "" {
			return nil, "", fmt.Errorf("%s: service and name are required", at)
		}
		t := &fleetgraph.Target{Scope: ft.Scope, Kind: ft.Kind, Name: ft.Name, Service: ft.Service, Labels: ft.Labels,
			RequestedRef: ft.RequestedRef, ResolvedRef: ft.ResolvedRef, Digest: ft.Digest, Compliance: fleetgraph.Status(ft.Compliance)}
		if t.Compliance != "" && !t.Compliance.Valid() {
			return nil, "", fmt.Errorf("%s.compliance %q: want one of %v", at, ft.Compliance, fleetgraph.Statuses())
		}
		if ft.Coverage != nil {
			t.Coverage = &fleetgraph.Coverage{Evaluated: ft.Coverage.Evaluated, Required: ft.Coverage.Required}
		}
		if ft.EvidenceAt != nil {
			t.EvidenceAt = ft.EvidenceAt.UTC()
		}
		if ft.ReconciledAt != nil {
			t.ReconciledAt = ft.ReconciledAt.UTC()
		}
		if ft.ObservedRuntime != nil {
			rt, err := json.Marshal(ft.ObservedRuntime)
			if err != nil {
				return nil, "", fmt.Errorf("%s.observedRuntime: %w", at, err)
			}
			t.ObservedRuntime = rt
		}
		for j, fd := range ft.Findings {
			if fd.Code == "" {
				return nil, "", fmt.Errorf("%s.findings[%d]: code is required", at, j)
			}
			t.Findings = append(t.Findings, fleetgraph.Finding{Code: fd.Code, Severity: fd.Severity, Category: fd.Category, SubjectKind: fd.SubjectKind, SubjectName: fd.SubjectName, Message: fd.Message})
		}
		if prev, dup := seen[t.Key()]; dup {
			return nil, "", fmt.Errorf("%s duplicates targets[%d] (%s)", at, prev, t.Key())
		}
		seen[t.Key()] = i
		out = append(out, t)
	}
	return out, status, nil
}
