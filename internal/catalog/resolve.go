package catalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/oci"
)

// Options configure [Build] and [NewLive].
type Options struct {
	// Roots are the requested roots: oci:// references or local bundle
	// directories (file://path or a bare path), in the order given. At
	// least one is required, and none may be empty.
	Roots []string
	// Client resolves and pulls oci:// references. Nil leaves every
	// registry reference unresolved (UNAVAILABLE, no registry access).
	Client *oci.Client
	// Limits bound each bundle's files, local or pulled.
	Limits archive.Limits
	// Bounds cap the catalog; zero fields take DefaultBounds.
	Bounds Bounds
	// Now stamps generatedAt (default time.Now).
	Now func() time.Time
	// RequestTimeout, when set, bounds the whole resolution of one
	// reference (its tag, then the bundle's manifest, config and layer).
	// Zero: no bound of the catalog's own; each registry operation is
	// bounded by the Client's timeout (--registry-timeout) anyway. Either
	// way each reference is resolved on a context of its own, so a
	// registry that stalls costs its branch the timeout and no other
	// branch anything.
	RequestTimeout time.Duration
	// Concurrency bounds the references resolved at once; the references
	// of one depth are resolved together, up to this many (each may hold
	// one bundle in memory while it is read). Zero: DefaultConcurrency.
	Concurrency int
}

// Defaults of [Options].
const (
	DefaultConcurrency = 4
	// maxConcurrency is the most references Options.Concurrency may ask
	// to resolve at once.
	maxConcurrency = 64
)

// check returns the options with defaults filled, or an error naming the
// option field at fault. It makes no resolver call.
func (o *Options) check() (Options, error) {
	if o == nil {
		o = &Options{}
	}
	out := *o
	if len(out.Roots) == 0 {
		return Options{}, &OptionError{Field: "Roots", Message: "is empty: name at least one root, a local bundle directory or an oci:// reference; an empty catalog would read as proof that nothing exists"}
	}
	for i, r := range out.Roots {
		if strings.TrimSpace(r) == "" {
			return Options{}, &OptionError{Field: fmt.Sprintf("Roots[%d]", i), Message: "is empty: a root needs a reference, a local bundle directory or an oci:// reference"}
		}
	}
	b, err := out.Bounds.withDefaults()
	if err != nil {
		return Options{}, err
	}
	out.Bounds = b
	if out.RequestTimeout < 0 {
		return Options{}, &OptionError{Field: "RequestTimeout", Message: fmt.Sprintf("is %s: want 0 (the registry client's timeout alone) or a positive duration", out.RequestTimeout)}
	}
	switch {
	case out.Concurrency < 0 || out.Concurrency > maxConcurrency:
		return Options{}, &OptionError{Field: "Concurrency", Message: fmt.Sprintf("is %d: want 0 (the default, %d) up to %d", out.Concurrency, DefaultConcurrency, maxConcurrency)}
	case out.Concurrency == 0:
		out.Concurrency = DefaultConcurrency
	}
	if out.Now == nil {
		out.Now = time.Now
	}
	return out, nil
}

// Build resolves the roots and their dependency closure once. Its error is
// only for options it refuses (no roots, an empty one, a bound out of
// range), before any resolver call; a root or a dependency that does not
// resolve is part of the answer, with its reason, and makes it partial.
func Build(ctx context.Context, opts *Options) (*Catalog, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	return build(ctx, &o, nil, nil), nil
}

// loaded is what the catalog keeps of one resolved bundle: its identity,
// the fields it shows and its declared dependencies. Never the files.
type loaded struct {
	id           RevisionID
	version      string
	pactoVersion string
	owner        string
	deps         []contract.Dependency
	// dir is a local bundle's directory, the base of its local references;
	// empty for a registry bundle, which may not declare local ones.
	dir string
	// resolvedRef is a registry bundle's reference pinned to its digest.
	resolvedRef string
}

// outcome is one reference resolved within a build.
type outcome struct {
	l      *loaded
	reason *Reason
	// pinned is the content key (registry/repository@digest) of a
	// registry bundle read for it or found among content; empty otherwise.
	pinned string
	// timedOut says the registry ran out of time answering it.
	timedOut bool
}

// node is one revision of the closure being built.
type node struct {
	l         *loaded
	minDepth  int
	requested map[string]bool
	resolved  map[string]bool
	out       []int // indexes into builder.edges
}

type builder struct {
	o *Options
	// content holds registry bundles already read, by pinned reference
	// (registry/repository@digest): content never changes under a
	// digest. It is the Live's cache, or nil, and is only read during a
	// build; seen collects what this build used, for the Live to keep.
	content map[string]*loaded
	seen    map[string]*loaded
	// refs are the references resolved in this build, by base and ref.
	refs map[string]outcome

	nodes      map[string]*node
	edges      []Edge
	edgeTo     []*node
	unresolved []Unresolved
	roots      []Root
	lims       []Limitation
	limSeen    map[string]bool
	work       int // dependency declarations followed, for MaxEdges
	dropped    int // unresolved dependencies beyond MaxUnresolved

	// stalled are the registries (host[:port]) that let a reference
	// time out in this build: they are not asked again in it, so one
	// stalled registry costs a build one timeout, however many of its
	// references the closure holds. The fetches of a depth share it.
	mu      sync.Mutex
	stalled map[string]bool
}

func newBuilder(o *Options, content, seen map[string]*loaded) *builder {
	return &builder{o: o, content: content, seen: seen, refs: map[string]outcome{}, nodes: map[string]*node{}, limSeen: map[string]bool{},
		stalled: map[string]bool{}}
}

// build resolves a catalog from checked options. content is a cache of
// registry bundles by pinned reference (nil: none); seen, when not nil,
// receives the entries this build used.
//
// It goes breadth first, one depth at a time, so a revision is first met
// at its least depth: the references of a depth are collected in
// declaration order (bounds checked before any is asked for), resolved
// together (Options.Concurrency at once, each on its own context), then
// applied in declaration order. So the
// answer does not depend on which registry answered first, and a
// registry that stalls delays its depth by at most the timeout and
// cancels nothing else.
func build(ctx context.Context, o *Options, content, seen map[string]*loaded) *Catalog {
	b := newBuilder(o, content, seen)
	lv := b.newLevel()
	roots := make([]*target, len(o.Roots))
	for i, ref := range o.Roots {
		if i < o.Bounds.MaxRoots {
			roots[i] = lv.want(ref, nil)
		}
	}
	lv.run(ctx)
	var frontier []*node
	for i, ref := range o.Roots {
		r := Root{ID: i, RequestedRef: ref}
		if i >= o.Bounds.MaxRoots {
			r.Reason = &Reason{Code: ReasonBoundExceeded, Message: fmt.Sprintf("only the first %d roots are resolved (maxRoots)", o.Bounds.MaxRoots)}
			b.limitOnce(LimitRoots, fmt.Sprintf("%d roots were requested; only the first %d are resolved (maxRoots)", len(o.Roots), o.Bounds.MaxRoots))
			b.roots = append(b.roots, r)
			continue
		}
		res := b.settle(roots[i])
		if res.reason != nil {
			r.Reason = res.reason
			b.limit(Limitation{Code: LimitRootUnresolved, Ref: ref, Message: fmt.Sprintf("root %d did not resolve (%s): %s", i, res.reason.Code, res.reason.Message)})
			b.roots = append(b.roots, r)
			continue
		}
		id := res.l.id
		r.Resolved, r.Revision, r.ResolvedRef = true, &id, res.l.resolvedRef
		b.roots = append(b.roots, r)
		n, isNew := b.add(res.l, 0, ref)
		if isNew {
			frontier = append(frontier, n)
		}
	}
	for depth := 0; len(frontier) > 0; depth++ {
		frontier = b.followDepth(ctx, frontier, depth)
	}
	if ctx.Err() != nil {
		b.limitOnce(LimitCancelled, "resolution was cancelled or timed out before it finished: what is missing is unknown, not absent")
	}
	return b.finish()
}

// declared is one dependency declaration of a depth: a bound that stops
// it before any resolver call, or the target it resolves through.
type declared struct {
	from  *node
	index int
	dep   contract.Dependency
	t     *target
	// bound and boundLimit, when set, are why it is not followed and the
	// limitation that says so once.
	bound      *Reason
	boundLimit *Limitation
}

// followDepth follows the dependencies of the revisions first met at
// depth and returns those first met at depth+1, in declaration order.
func (b *builder) followDepth(ctx context.Context, frontier []*node, depth int) []*node {
	o := b.o
	lv := b.newLevel()
	var decls []declared
	for _, n := range frontier {
		for j, dep := range n.l.deps {
			d := declared{from: n, index: j, dep: dep}
			switch {
			case b.work >= o.Bounds.MaxEdges:
				d.bound = &Reason{Code: ReasonBoundExceeded, Message: "not followed: the catalog reached maxEdges"}
				d.boundLimit = &Limitation{Code: LimitEdges, Message: fmt.Sprintf("only %d dependency declarations are followed (maxEdges); the rest are unresolved with BOUND_EXCEEDED", o.Bounds.MaxEdges)}
			case depth+1 > o.Bounds.MaxDepth:
				b.work++
				d.bound = &Reason{Code: ReasonBoundExceeded, Message: "not followed: it is more than maxDepth hops from a root"}
				d.boundLimit = &Limitation{Code: LimitDepth, Message: fmt.Sprintf("dependencies more than %d hops from a root are not followed (maxDepth)", o.Bounds.MaxDepth)}
			default:
				b.work++
				d.t = lv.want(dep.Ref, n.l)
			}
			decls = append(decls, d)
		}
	}
	lv.run(ctx)
	var next []*node
	for _, d := range decls {
		decl := Declaration{From: d.from.l.id, Index: d.index}
		dep := d.dep
		fail := func(reason Reason) {
			b.unresolve(Unresolved{Declaration: decl, Name: dep.Name, Ref: dep.Ref, Constraint: dep.Compatibility, Required: dep.Required, Reason: reason})
		}
		if d.bound != nil {
			b.limitOnce(d.boundLimit.Code, d.boundLimit.Message)
			fail(*d.bound)
			continue
		}
		res := b.settle(d.t)
		if res.reason != nil {
			fail(*res.reason)
			continue
		}
		to, isNew := b.add(res.l, depth+1, dep.Ref)
		b.edges = append(b.edges, Edge{Declaration: decl, Name: dep.Name, Ref: dep.Ref, Constraint: dep.Compatibility, Required: dep.Required, To: to.l.id})
		b.edgeTo = append(b.edgeTo, to)
		d.from.out = append(d.from.out, len(b.edges)-1)
		if isNew {
			next = append(next, to)
		}
	}
	return next
}

// add records a resolved bundle as a revision, or the new way to an
// existing one, and reports whether it is new.
func (b *builder) add(l *loaded, depth int, requested string) (*node, bool) {
	k := l.id.key()
	n, ok := b.nodes[k]
	if !ok {
		n = &node{l: l, minDepth: depth, requested: map[string]bool{}, resolved: map[string]bool{}}
		b.nodes[k] = n
	}
	n.requested[requested] = true
	if l.resolvedRef != "" {
		n.resolved[l.resolvedRef] = true
	}
	return n, !ok
}

func (b *builder) unresolve(u Unresolved) {
	b.limit(Limitation{Code: LimitUnresolvedDependency, Ref: u.Ref, Message: fmt.Sprintf("dependency %q of %s did not resolve (%s): %s", u.Name, u.Declaration.From, u.Reason.Code, u.Reason.Message)})
	if len(b.unresolved) >= b.o.Bounds.MaxUnresolved {
		b.dropped++
		return
	}
	b.unresolved = append(b.unresolved, u)
}

func (b *builder) limit(l Limitation) { b.lims = append(b.lims, l) }

func (b *builder) limitOnce(code, msg string) {
	if b.limSeen[code] {
		return
	}
	b.limSeen[code] = true
	b.limit(Limitation{Code: code, Message: msg})
}

// target is one reference wanted at a depth: settled when it is wanted
// (a reference refused as written, one already resolved in this build, a
// bound), or pending until the depth's references are resolved together.
type target struct {
	ref     oci.BundleRef
	key     string // the builder's refs key; "" when the outcome is not kept
	res     outcome
	pending bool
	// boundLimit is the limitation a BOUND_EXCEEDED outcome adds once,
	// when it is applied.
	boundLimit *Limitation
}

// level collects the targets of one depth, each reference once.
type level struct {
	b       *builder
	byKey   map[string]*target
	pending []*target
}

func (b *builder) newLevel() *level { return &level{b: b, byKey: map[string]*target{}} }

// want returns the target of ref, as declared by from (nil for a root).
// Bounds are checked here, before any resolver call: a depth asks for at
// most as many new references as maxRevisions leaves room for, counting
// each pending one as a new revision.
func (lv *level) want(ref string, from *loaded) *target {
	b := lv.b
	br, err := oci.ParseBundleRef(ref)
	if err != nil {
		return &target{res: outcome{reason: referenceReason(err)}}
	}
	var key string
	if br.IsLocal() {
		if from != nil && from.dir == "" {
			return &target{res: outcome{reason: &Reason{Code: ReasonInvalidReference,
				Message: "a local reference declared inside a registry bundle is not followed: remote content may not make the catalog read local files"}}}
		}
		p := filepath.FromSlash(br.Local)
		if from != nil && !filepath.IsAbs(p) {
			p = filepath.Join(from.dir, p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return &target{res: outcome{reason: &Reason{Code: ReasonInvalidReference, Message: "the local path cannot be made absolute"}}}
		}
		key = "local\x00" + abs
		br.Local = abs
	} else {
		key = "oci\x00" + br.OCI.String()
	}
	if res, ok := b.refs[key]; ok {
		return &target{res: res}
	}
	if t, ok := lv.byKey[key]; ok {
		return t
	}
	if len(b.nodes)+len(lv.pending) >= b.o.Bounds.MaxRevisions {
		return &target{res: outcome{reason: &Reason{Code: ReasonBoundExceeded, Message: "not resolved: the catalog reached maxRevisions"}},
			boundLimit: &Limitation{Code: LimitRevisions, Message: fmt.Sprintf("the catalog holds %d revisions, its maxRevisions: references not yet resolved are unresolved with BOUND_EXCEEDED", b.o.Bounds.MaxRevisions)}}
	}
	t := &target{ref: br, key: key, pending: true}
	lv.byKey[key] = t
	lv.pending = append(lv.pending, t)
	return t
}

// run resolves the pending targets, Concurrency at once, then records
// their outcomes for the rest of the build.
func (lv *level) run(ctx context.Context) {
	b := lv.b
	sem := make(chan struct{}, b.o.Concurrency)
	var wg sync.WaitGroup
	for _, t := range lv.pending {
		if !acquire(ctx, sem) {
			t.res = outcome{reason: cancelledReason()}
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			t.res = b.fetch(ctx, t.ref)
		})
	}
	wg.Wait()
	for _, t := range lv.pending {
		b.refs[t.key] = t.res
		if t.res.pinned != "" {
			b.keep(t.res.pinned, t.res.l)
		}
	}
}

// acquire takes a slot of sem, or reports false once ctx is done.
func acquire(ctx context.Context, sem chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// settle returns t's outcome, adding the limitation of a bound it hit.
func (b *builder) settle(t *target) outcome {
	if t.boundLimit != nil {
		b.limitOnce(t.boundLimit.Code, t.boundLimit.Message)
	}
	return t.res
}

// fetch loads one reference. It runs beside the other fetches of its
// depth: it reads the builder's options and content, and writes nothing
// of the builder but the stalled registries. A registry reference gets a
// context of its own (bounded by RequestTimeout when set), so that a
// stalled registry ends its own branch only; once it has let one
// reference time out, its other references in this build fail at once.
func (b *builder) fetch(ctx context.Context, ref oci.BundleRef) outcome {
	if ref.IsLocal() {
		return b.loadLocal(ref.Local)
	}
	host := ref.OCI.Registry
	b.mu.Lock()
	stalled := b.stalled[host]
	b.mu.Unlock()
	if stalled {
		return outcome{reason: &Reason{Code: ReasonUnavailable,
			Message: "the registry let an earlier reference time out and is not asked again in this resolution; retry, or raise --registry-timeout"}}
	}
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if b.o.RequestTimeout > 0 {
		rctx, cancel = context.WithTimeout(ctx, b.o.RequestTimeout)
	}
	defer cancel()
	res := b.loadOCI(rctx, ref.OCI)
	switch {
	case res.reason == nil:
	case ctx.Err() != nil:
		return outcome{reason: cancelledReason()}
	case rctx.Err() != nil:
		res = outcome{reason: &Reason{Code: ReasonUnavailable,
			Message: fmt.Sprintf("the registry did not answer within %s, the catalog's time for one reference", b.o.RequestTimeout)}, timedOut: true}
	}
	if res.timedOut {
		b.mu.Lock()
		b.stalled[host] = true
		b.mu.Unlock()
	}
	return res
}

func cancelledReason() *Reason {
	return &Reason{Code: ReasonCancelled, Message: "resolution was cancelled or timed out"}
}

func (b *builder) loadLocal(dir string) outcome {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return outcome{reason: &Reason{Code: ReasonNotFound, Message: "there is no directory at this path"}}
	case err != nil:
		return outcome{reason: &Reason{Code: ReasonUnavailable, Message: "the directory cannot be read"}}
	case !st.IsDir():
		return outcome{reason: &Reason{Code: ReasonInvalidReference, Message: "the path is not a directory: a local bundle is a directory holding pacto.yaml"}}
	}
	bd, err := bundle.LoadDir(dir, &bundle.LoadOptions{Limits: b.o.Limits})
	if err != nil {
		return outcome{reason: loadReason(err)}
	}
	l, reason := summarise(bd)
	if reason != nil {
		return outcome{reason: reason}
	}
	l.id.Content = ContentID{Scheme: SchemeLocal, Digest: bd.Identity.String()}
	l.dir = dir
	return outcome{l: l}
}

func (b *builder) loadOCI(ctx context.Context, ref oci.Reference) outcome {
	if b.o.Client == nil {
		return outcome{reason: &Reason{Code: ReasonUnavailable, Message: "no registry access is configured here"}}
	}
	// A tag is resolved once, here; everything after is by digest.
	d, err := b.o.Client.Resolve(ctx, ref)
	if err != nil {
		return outcome{reason: registryReason(err), timedOut: timedOut(err)}
	}
	pinned := ref.WithDigest(d)
	pinned.Tag = ""
	key := pinned.String()
	if l, ok := b.content[key]; ok {
		return outcome{l: l, pinned: key}
	}
	bd, err := bundle.Load(ctx, oci.Scheme+key, &bundle.LoadOptions{Client: b.o.Client, Limits: b.o.Limits})
	if err != nil {
		return outcome{reason: registryReason(err), timedOut: timedOut(err)}
	}
	l, reason := summarise(bd)
	if reason != nil {
		return outcome{reason: reason}
	}
	domain := ref.Registry
	if i := strings.LastIndexByte(ref.Repository, '/'); i >= 0 {
		domain += "/" + ref.Repository[:i]
	}
	l.id.Service.Domain = domain
	l.id.Content = ContentID{Scheme: SchemeOCI, Digest: bd.Identity.String()}
	l.resolvedRef = oci.Scheme + key
	return outcome{l: l, pinned: key}
}

func (b *builder) keep(key string, l *loaded) {
	if b.seen != nil {
		b.seen[key] = l
	}
}

// summarise keeps what the catalog shows of a bundle.
func summarise(bd *bundle.Bundle) (*loaded, *Reason) {
	c := bd.Contract
	if c == nil {
		return nil, &Reason{Code: ReasonInvalidContract, Message: "its pacto.yaml does not parse as a Pacto contract"}
	}
	if c.Service.Name == "" {
		return nil, &Reason{Code: ReasonInvalidIdentity, Message: "its contract names no service (service.name is empty)"}
	}
	l := &loaded{id: RevisionID{Service: ServiceID{Name: c.Service.Name}}, version: c.Service.Version, pactoVersion: c.PactoVersion,
		deps: slices.Clone(c.Dependencies)}
	if o := c.Service.Owner; o != nil {
		l.owner = cmp.Or(o.Team, o.DRI)
	}
	return l, nil
}

// referenceReason is a reference the one parser refuses. Its reason is
// our own text about the reference as written, never a registry's.
func referenceReason(err error) *Reason {
	var re *oci.ReferenceError
	if errors.As(err, &re) {
		return &Reason{Code: ReasonInvalidReference, Message: re.Reason}
	}
	return &Reason{Code: ReasonInvalidReference, Message: err.Error()}
}

// timedOut reports whether a registry operation failed by running out of
// the client's time.
func timedOut(err error) bool {
	re, ok := errors.AsType[*oci.RegistryError](err)
	return ok && re.Problem == oci.ProblemTimeout
}

// registryReason gives a registry failure its sanitised code and a message
// of our own: a registry's or a transport's text never reaches the
// catalog, since it may carry hosts, tokens or anything a hostile
// registry chose to send.
func registryReason(err error) *Reason {
	if re, ok := errors.AsType[*oci.RegistryError](err); ok {
		// bundle/oci's sentence, ours and naming the flag that would help;
		// without hosts, as the root or dependency is shown beside it.
		code := map[oci.Problem]string{oci.ProblemNotAllowed: ReasonNotAllowed, oci.ProblemAddress: ReasonNotAllowed,
			oci.ProblemRedirect: ReasonNotAllowed, oci.ProblemAuth: ReasonAuthFailed, oci.ProblemNotFound: ReasonNotFound,
			oci.ProblemCancelled: ReasonCancelled}[re.Problem]
		return &Reason{Code: cmp.Or(code, ReasonUnavailable), Message: re.Summary()}
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &Reason{Code: ReasonCancelled, Message: "resolution was cancelled or timed out"}
	case errors.Is(err, oci.ErrInvalidReference):
		return referenceReason(err)
	case errors.Is(err, oci.ErrAuthFailed):
		return &Reason{Code: ReasonAuthFailed, Message: "the registry refused the credentials, or their absence"}
	case errors.Is(err, oci.ErrNotFound):
		return &Reason{Code: ReasonNotFound, Message: "the registry has no such repository, tag or digest"}
	case errors.Is(err, oci.ErrInvalidArtifact):
		return &Reason{Code: ReasonInvalidContract, Message: "what the registry holds is not a Pacto bundle in the expected format"}
	}
	var ae *archive.Error
	if errors.As(err, &ae) {
		return &Reason{Code: ReasonInvalidContract, Message: "the bundle's files are malformed or exceed the extraction limits"}
	}
	return &Reason{Code: ReasonUnavailable, Message: "the registry could not be reached or did not answer"}
}

// loadReason classifies a local directory the loader refused.
func loadReason(err error) *Reason {
	var ae *archive.Error
	switch {
	case errors.As(err, &ae):
		return &Reason{Code: ReasonInvalidContract, Message: "the bundle's files exceed the bundle limits or cannot be packed"}
	case strings.Contains(err.Error(), "has no "+contract.FileName):
		return &Reason{Code: ReasonInvalidContract, Message: "the directory holds no " + contract.FileName}
	}
	return &Reason{Code: ReasonUnavailable, Message: "the directory cannot be read as a bundle"}
}

// finish orders the graph and computes what is derived from it: ranks,
// roots, paths, conflicts, cycles, completeness and the id.
func (b *builder) finish() *Catalog {
	o := b.o
	nodes := make([]*node, 0, len(b.nodes))
	for _, n := range b.nodes {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(x, y *node) int { return strings.Compare(x.l.id.key(), y.l.id.key()) })
	index := make(map[*node]int, len(nodes))
	for i, n := range nodes {
		index[n] = i
	}
	c := &Catalog{roots: b.roots, byKey: make(map[string]int, len(nodes))}
	c.revisions = make([]Revision, len(nodes))
	for i, n := range nodes {
		c.byKey[n.l.id.key()] = i
		c.revisions[i] = Revision{RevisionID: n.l.id, Version: n.l.version, PactoVersion: n.l.pactoVersion, Owner: n.l.owner,
			RequestedRefs: sortedKeys(n.requested), ResolvedRefs: sortedKeys(n.resolved), Roots: []int{}, Paths: []Path{}, MinDepth: n.minDepth, Rank: RankTransitive}
		if n.minDepth == 1 {
			c.revisions[i].Rank = RankDirect
		}
	}
	// Out-edges per revision in declaration order: (index into b.edges,
	// target revision).
	outs := make([][][2]int, len(nodes))
	for _, n := range nodes {
		for _, e := range n.out {
			outs[index[n]] = append(outs[index[n]], [2]int{e, index[b.edgeTo[e]]})
		}
	}

	// Roots: which requested roots reach each revision.
	for _, r := range b.roots {
		if !r.Resolved {
			continue
		}
		start := c.byKey[r.Revision.key()]
		c.revisions[start].Rank = RankRoot
		seen := make([]bool, len(nodes))
		stack := []int{start}
		seen[start] = true
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c.revisions[v].Roots = append(c.revisions[v].Roots, r.ID)
			for _, e := range outs[v] {
				if !seen[e[1]] {
					seen[e[1]] = true
					stack = append(stack, e[1])
				}
			}
		}
	}
	for i := range c.revisions {
		slices.Sort(c.revisions[i].Roots)
		c.revisions[i].Roots = slices.Compact(c.revisions[i].Roots)
	}
	b.paths(c, outs)

	c.edges = slices.Clone(b.edges)
	slices.SortFunc(c.edges, func(x, y Edge) int { return compareDecl(x.Declaration, y.Declaration) })
	c.unresolved = b.unresolved
	slices.SortFunc(c.unresolved, func(x, y Unresolved) int { return compareDecl(x.Declaration, y.Declaration) })
	if b.dropped > 0 {
		b.limit(Limitation{Code: LimitUnresolved, Message: fmt.Sprintf("%d more unresolved dependencies are not listed (maxUnresolved %d)", b.dropped, o.Bounds.MaxUnresolved)})
	}
	c.conflicts = b.conflictsOf(c)
	c.cycles = b.cyclesOf(c, outs)

	lims := b.lims
	if len(lims) > o.Bounds.MaxLimitations {
		more := len(lims) - (o.Bounds.MaxLimitations - 1)
		lims = append(lims[:o.Bounds.MaxLimitations-1:o.Bounds.MaxLimitations-1],
			Limitation{Code: LimitLimitations, Message: fmt.Sprintf("%d more limitations are not listed (maxLimitations %d)", more, o.Bounds.MaxLimitations)})
	}
	completeness := CompletenessComplete
	if len(b.lims) > 0 {
		completeness = CompletenessPartial
	}
	requested := slices.Clone(o.Roots)
	c.meta = Meta{SchemaVersion: SchemaVersion, GeneratedAt: o.Now().UTC(), Completeness: completeness, Bounds: o.Bounds,
		RequestedRoots: requested, Limitations: nonNil(lims)}
	c.meta.CatalogID = fingerprint(c, b.lims)
	c.edges, c.unresolved, c.conflicts, c.cycles = nonNil(c.edges), nonNil(c.unresolved), nonNil(c.conflicts), nonNil(c.cycles)
	return c
}

// paths keeps, for every revision, up to MaxPathsPerRevision simple paths
// from the roots of at most MaxPathLength steps, shortest first.
func (b *builder) paths(c *Catalog, outs [][][2]int) {
	o := b.o
	maxPaths, maxLen := o.Bounds.MaxPathsPerRevision, o.Bounds.MaxPathLength
	type walk struct {
		p     Path
		nodes []int // the revisions the path visits, root first
	}
	frontier := make([][]walk, len(c.revisions))
	for _, r := range b.roots {
		if !r.Resolved {
			continue
		}
		v := c.byKey[r.Revision.key()]
		if len(c.revisions[v].Paths) >= maxPaths {
			c.revisions[v].PathsTruncated = true
			continue
		}
		w := walk{p: Path{Root: r.ID, Steps: []Step{}}, nodes: []int{v}}
		c.revisions[v].Paths = append(c.revisions[v].Paths, w.p)
		frontier[v] = append(frontier[v], w)
	}
	for step := 1; ; step++ {
		next := make([][]walk, len(c.revisions))
		grew := false
		for u := range frontier {
			for _, w := range frontier[u] {
				for _, e := range outs[u] {
					to := e[1]
					if slices.Contains(w.nodes, to) {
						continue // a cycle: paths are simple
					}
					if step > maxLen {
						b.limitOnce(LimitPathLength, fmt.Sprintf("paths longer than %d steps are not kept (maxPathLength)", maxLen))
						c.revisions[to].PathsTruncated = true
						continue
					}
					if len(c.revisions[to].Paths) >= maxPaths {
						b.limitOnce(LimitPaths, fmt.Sprintf("at most %d paths are kept per revision (maxPathsPerRevision)", maxPaths))
						c.revisions[to].PathsTruncated = true
						continue
					}
					decl := b.edges[e[0]].Declaration
					steps := append(slices.Clip(w.p.Steps), Step(decl))
					nw := walk{p: Path{Root: w.p.Root, Steps: steps}, nodes: append(slices.Clip(w.nodes), to)}
					c.revisions[to].Paths = append(c.revisions[to].Paths, nw.p)
					next[to] = append(next[to], nw)
					grew = true
				}
			}
		}
		if !grew {
			return
		}
		frontier = next
	}
}

// conflictsOf lists version, content and declaration conflicts, at most
// MaxConflicts of them (cycles share the bound).
func (b *builder) conflictsOf(c *Catalog) []Conflict {
	var out []Conflict
	type group struct {
		service  ServiceID
		versions map[string][]RevisionID
	}
	var order []string
	groups := map[string]*group{}
	for i := range c.revisions {
		r := &c.revisions[i]
		k := r.Service.Domain + "\x00" + r.Service.Name
		g, ok := groups[k]
		if !ok {
			g = &group{service: r.Service, versions: map[string][]RevisionID{}}
			groups[k] = g
			order = append(order, k)
		}
		g.versions[r.Version] = append(g.versions[r.Version], r.RevisionID)
	}
	for _, k := range order {
		g := groups[k]
		versions := sortedKeys(g.versions)
		if len(versions) > 1 {
			var revs []RevisionID
			for _, v := range versions {
				revs = append(revs, g.versions[v]...)
			}
			out = append(out, Conflict{Kind: ConflictVersion, Service: g.service, Versions: versions, Revisions: revs})
		}
		for _, v := range versions {
			if revs := g.versions[v]; len(revs) > 1 {
				out = append(out, Conflict{Kind: ConflictContent, Service: g.service, Version: v, Versions: []string{v}, Revisions: revs})
			}
		}
	}
	for _, e := range c.edges {
		if e.Constraint == "" {
			continue
		}
		to, _ := c.Revision(e.To)
		cons, err1 := semver.NewConstraint(e.Constraint)
		v, err2 := semver.NewVersion(to.Version)
		if err1 != nil || err2 != nil || cons.Check(v) {
			continue // an unreadable range or version is the validator's finding, not a conflict
		}
		d := e.Declaration
		out = append(out, Conflict{Kind: ConflictDeclaration, Service: to.Service, Version: to.Version, Declaration: &d,
			Versions: []string{to.Version}, Revisions: []RevisionID{to.RevisionID}})
	}
	if len(out) > b.o.Bounds.MaxConflicts {
		b.limit(Limitation{Code: LimitConflicts, Message: fmt.Sprintf("%d more conflicts are not listed (maxConflicts %d)", len(out)-b.o.Bounds.MaxConflicts, b.o.Bounds.MaxConflicts)})
		out = out[:b.o.Bounds.MaxConflicts]
	}
	return out
}

// cyclesOf lists the dependency cycles found by a depth-first walk (one
// per edge that closes one), each rotated to start at its smallest
// identity, without repeats; at most MaxConflicts of them.
func (b *builder) cyclesOf(c *Catalog, outs [][][2]int) []Cycle {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(c.revisions))
	var stack []int
	seen := map[string]bool{}
	var out []Cycle
	more := 0
	var visit func(v int)
	visit = func(v int) {
		color[v] = grey
		stack = append(stack, v)
		for _, e := range outs[v] {
			to := e[1]
			switch color[to] {
			case white:
				visit(to)
			case grey:
				i := slices.Index(stack, to)
				cyc := slices.Clone(stack[i:])
				// Revisions are sorted by identity: the smallest index is
				// the smallest identity.
				m := slices.Index(cyc, slices.Min(cyc))
				cyc = append(cyc[m:], cyc[:m]...)
				k := fmt.Sprint(cyc)
				if seen[k] {
					continue
				}
				seen[k] = true
				if len(out) >= b.o.Bounds.MaxConflicts {
					more++
					continue
				}
				ids := make([]RevisionID, len(cyc))
				for j, x := range cyc {
					ids[j] = c.revisions[x].RevisionID
				}
				out = append(out, Cycle{Revisions: ids})
			}
		}
		stack = stack[:len(stack)-1]
		color[v] = black
	}
	for v := range c.revisions {
		if color[v] == white {
			visit(v)
		}
	}
	if more > 0 {
		b.limit(Limitation{Code: LimitConflicts, Message: fmt.Sprintf("%d more cycles are not listed (maxConflicts %d)", more, b.o.Bounds.MaxConflicts)})
	}
	return out
}

func compareDecl(x, y Declaration) int {
	return cmp.Or(strings.Compare(x.From.key(), y.From.key()), cmp.Compare(x.Index, y.Index))
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
