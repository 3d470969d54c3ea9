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
}

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
	// digest. It is the Live's cache, or nil; seen collects what this
	// build used, for the Live to keep.
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
}

// build resolves a catalog from checked options. content is a cache of
// registry bundles by pinned reference (nil: none); seen, when not nil,
// receives the entries this build used.
func build(ctx context.Context, o *Options, content, seen map[string]*loaded) *Catalog {
	b := &builder{o: o, content: content, seen: seen, refs: map[string]outcome{}, nodes: map[string]*node{}, limSeen: map[string]bool{}}
	type item struct {
		n     *node
		depth int
	}
	var queue []item
	for i, ref := range o.Roots {
		r := Root{ID: i, RequestedRef: ref}
		if i >= o.Bounds.MaxRoots {
			r.Reason = &Reason{Code: ReasonBoundExceeded, Message: fmt.Sprintf("only the first %d roots are resolved (maxRoots)", o.Bounds.MaxRoots)}
			b.limitOnce(LimitRoots, fmt.Sprintf("%d roots were requested; only the first %d are resolved (maxRoots)", len(o.Roots), o.Bounds.MaxRoots))
			b.roots = append(b.roots, r)
			continue
		}
		res := b.resolve(ctx, ref, nil)
		if res.reason != nil {
			r.Reason = res.reason
			b.limit(Limitation{Code: LimitRootUnresolved, Ref: ref, Message: fmt.Sprintf("root %d did not resolve: %s", i, res.reason.Code)})
			b.roots = append(b.roots, r)
			continue
		}
		id := res.l.id
		r.Resolved, r.Revision, r.ResolvedRef = true, &id, res.l.resolvedRef
		b.roots = append(b.roots, r)
		n, isNew := b.add(res.l, 0, ref)
		if isNew {
			queue = append(queue, item{n, 0})
		}
	}
	// Breadth first, so a revision is first met at its least depth.
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		from := it.n.l
		for j, dep := range from.deps {
			decl := Declaration{From: from.id, Index: j}
			fail := func(reason Reason) {
				b.unresolve(Unresolved{Declaration: decl, Name: dep.Name, Ref: dep.Ref, Constraint: dep.Compatibility, Required: dep.Required, Reason: reason})
			}
			if b.work >= o.Bounds.MaxEdges {
				b.limitOnce(LimitEdges, fmt.Sprintf("only %d dependency declarations are followed (maxEdges); the rest are unresolved with BOUND_EXCEEDED", o.Bounds.MaxEdges))
				fail(Reason{Code: ReasonBoundExceeded, Message: "not followed: the catalog reached maxEdges"})
				continue
			}
			b.work++
			if it.depth+1 > o.Bounds.MaxDepth {
				b.limitOnce(LimitDepth, fmt.Sprintf("dependencies more than %d hops from a root are not followed (maxDepth)", o.Bounds.MaxDepth))
				fail(Reason{Code: ReasonBoundExceeded, Message: "not followed: it is more than maxDepth hops from a root"})
				continue
			}
			res := b.resolve(ctx, dep.Ref, from)
			if res.reason != nil {
				fail(*res.reason)
				continue
			}
			to, isNew := b.add(res.l, it.depth+1, dep.Ref)
			b.edges = append(b.edges, Edge{Declaration: decl, Name: dep.Name, Ref: dep.Ref, Constraint: dep.Compatibility, Required: dep.Required, To: to.l.id})
			b.edgeTo = append(b.edgeTo, to)
			it.n.out = append(it.n.out, len(b.edges)-1)
			if isNew {
				queue = append(queue, item{to, it.depth + 1})
			}
		}
	}
	if ctx.Err() != nil {
		b.limitOnce(LimitCancelled, "resolution was cancelled or timed out before it finished: what is missing is unknown, not absent")
	}
	return b.finish()
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
	b.limit(Limitation{Code: LimitUnresolvedDependency, Ref: u.Ref, Message: fmt.Sprintf("dependency %q of %s did not resolve: %s", u.Name, u.Declaration.From, u.Reason.Code)})
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

// resolve loads the bundle ref names, as declared by from (nil for a
// root), once per build. Bounds are checked before the resolver is called.
func (b *builder) resolve(ctx context.Context, ref string, from *loaded) outcome {
	br, err := oci.ParseBundleRef(ref)
	if err != nil {
		return outcome{reason: referenceReason(err)}
	}
	var key string
	if br.IsLocal() {
		if from != nil && from.dir == "" {
			return outcome{reason: &Reason{Code: ReasonInvalidReference,
				Message: "a local reference declared inside a registry bundle is not followed: remote content may not make the catalog read local files"}}
		}
		p := filepath.FromSlash(br.Local)
		if from != nil && !filepath.IsAbs(p) {
			p = filepath.Join(from.dir, p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return outcome{reason: &Reason{Code: ReasonInvalidReference, Message: "the local path cannot be made absolute"}}
		}
		key = "local\x00" + abs
		br.Local = abs
	} else {
		key = "oci\x00" + br.OCI.String()
	}
	if res, ok := b.refs[key]; ok {
		return res
	}
	if len(b.nodes) >= b.o.Bounds.MaxRevisions {
		b.limitOnce(LimitRevisions, fmt.Sprintf("the catalog holds %d revisions, its maxRevisions: references not yet resolved are unresolved with BOUND_EXCEEDED", b.o.Bounds.MaxRevisions))
		return outcome{reason: &Reason{Code: ReasonBoundExceeded, Message: "not resolved: the catalog reached maxRevisions"}}
	}
	var res outcome
	if ctx.Err() != nil {
		res = outcome{reason: &Reason{Code: ReasonCancelled, Message: "resolution was cancelled or timed out"}}
	} else if br.IsLocal() {
		res = b.loadLocal(br.Local)
	} else {
		res = b.loadOCI(ctx, br.OCI)
	}
	b.refs[key] = res
	return res
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
		return outcome{reason: registryReason(err)}
	}
	pinned := ref.WithDigest(d)
	pinned.Tag = ""
	key := pinned.String()
	if l, ok := b.content[key]; ok {
		b.keep(key, l)
		return outcome{l: l}
	}
	bd, err := bundle.Load(ctx, oci.Scheme+key, &bundle.LoadOptions{Client: b.o.Client, Limits: b.o.Limits})
	if err != nil {
		return outcome{reason: registryReason(err)}
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
	b.keep(key, l)
	return outcome{l: l}
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
