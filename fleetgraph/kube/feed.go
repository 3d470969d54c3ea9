package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"
)

// Defaults.
const (
	DefaultSourceID      = "kubernetes"
	DefaultProbeInterval = 10 * time.Second
	// bundleLoads bounds the bundles read at once.
	bundleLoads = 4
	// bundleLoadTimeout bounds one bundle read.
	bundleLoadTimeout = time.Minute
	// bundleRetry is the first wait before a failed bundle read is tried
	// again; it doubles up to bundleRetryMax.
	bundleRetry    = 30 * time.Second
	bundleRetryMax = 15 * time.Minute
)

// SourceKind is the kind of the feed's source in every answer's meta.
const SourceKind = "kubernetes"

// BundleLoader reads a bundle by its digest-pinned OCI reference
// (oci://registry/repository@sha256:…). The operator's reads the
// reconciler's on-disk digest cache, so a bundle the reconciler pulled is
// never pulled again; fleetgraph/source.RefLoader is one.
type BundleLoader interface {
	Load(ctx context.Context, ref string) (*bundle.Bundle, error)
}

// Options configure a Feed; nil or zero fields mean defaults.
type Options struct {
	// SourceID names the feed in answers' meta.sources (default
	// "kubernetes").
	SourceID string
	// Namespaces restricts the watches; empty watches all namespaces.
	Namespaces []string
	// Bundles reads the bundles of ServiceContract revisions once per
	// digest, for their dependencies, interfaces and readiness. Nil
	// publishes revisions with what their status says only, and a
	// limitation saying so.
	Bundles BundleLoader
	// ProbeInterval is how often each watched resource is probed with a
	// one-item list while the feed runs (default 10s): a failure makes the
	// source partial, the next success clears it.
	ProbeInterval time.Duration
	// Registerer, when set, gets the feed's metrics (in the operator,
	// controller-runtime's metrics.Registry).
	Registerer prometheus.Registerer
	// Log receives the feed's log lines (default: discarded).
	Log logr.Logger
}

// Feed keeps a fleetgraph.Builder in step with a Kubernetes API server
// through its own informer cache. Start it once (it is a controller-runtime
// Runnable that every replica runs); it is safe for concurrent use.
type Feed struct {
	cfg     *rest.Config
	b       *fleetgraph.Builder
	opts    Options
	metrics *metrics
	synced  chan struct{}

	mu         sync.Mutex
	contracts  map[nsName]*v1alpha1.ServiceContract // as the cache holds them: read-only
	byTarget   map[wlKey]map[string]struct{}        // workload -> names of the ServiceContracts whose targetRef names it
	workloads  map[wlKey]*workload
	byContract map[nsName]map[wlKey]struct{} // ServiceContract -> workloads annotated with its name
	services   map[nsName]*corev1.Service
	bySvc      map[nsName]map[string]struct{} // Service -> names of the ServiceContracts whose serviceRef names it
	emitted    map[wlKey]bool                 // workload targets handed to the Builder
	scRev      map[nsName]string              // ServiceContract -> the revision key it contributes
	holders    map[string]map[nsName]struct{} // revision key -> the ServiceContracts contributing it
	bundles    map[string]*bundleState        // revision key -> its bundle's derivation
	badStatus  map[nsName]string              // ServiceContract -> why its status makes no revision
	pactos     map[nsName]struct{}            // Pacto CRs handed to the Builder as targets
	stateDirty bool                           // the limitations publishState derives changed
	loads      chan struct{}
	health     health
	lag        lagQueue
	retry      time.Duration   // first wait before a failed bundle read is retried
	changed    uint64          // Builder changes queued, to tell which events wait for a snapshot
	ctx        context.Context // Start's, for bundle loads
}

// bundleState is what the feed read from one revision's bundle.
type bundleState struct {
	rev      *fleetgraph.Revision // from the bundle; nil while loading or after a failure
	err      *fleetgraph.SourceError
	loading  bool
	failures int // consecutive failed reads, for the retry backoff
}

// NewFeed returns a Feed from cfg into b. Nothing is read until Start.
func NewFeed(cfg *rest.Config, b *fleetgraph.Builder, opts *Options) (*Feed, error) {
	if cfg == nil || b == nil {
		return nil, errors.New("kube: a feed needs a REST config and a Builder")
	}
	f := &Feed{cfg: rest.CopyConfig(cfg), b: b, synced: make(chan struct{}),
		contracts: map[nsName]*v1alpha1.ServiceContract{}, byTarget: map[wlKey]map[string]struct{}{},
		workloads: map[wlKey]*workload{}, byContract: map[nsName]map[wlKey]struct{}{}, services: map[nsName]*corev1.Service{}, bySvc: map[nsName]map[string]struct{}{},
		emitted: map[wlKey]bool{}, scRev: map[nsName]string{}, holders: map[string]map[nsName]struct{}{},
		bundles: map[string]*bundleState{}, badStatus: map[nsName]string{}, pactos: map[nsName]struct{}{}, loads: make(chan struct{}, bundleLoads), retry: bundleRetry}
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.SourceID == "" {
		f.opts.SourceID = DefaultSourceID
	}
	if f.opts.ProbeInterval <= 0 {
		f.opts.ProbeInterval = DefaultProbeInterval
	}
	for _, ns := range f.opts.Namespaces {
		if ns == "" {
			return nil, errors.New("kube: Options.Namespaces holds an empty namespace name")
		}
	}
	m, err := newMetrics(f.opts.Registerer, b)
	if err != nil {
		return nil, err
	}
	f.metrics = m
	f.health.init()
	return f, nil
}

// NeedLeaderElection is false: every replica keeps its own fleet.
func (f *Feed) NeedLeaderElection() bool { return false }

// Synced is closed once every informer has listed its resource.
func (f *Feed) Synced() <-chan struct{} { return f.synced }

// WaitSynced waits until the first complete list or ctx is done.
func (f *Feed) WaitSynced(ctx context.Context) error {
	select {
	case <-f.synced:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the Kubernetes fleet's first list: %w", context.Cause(ctx))
	}
}

// Start discovers which kinds the API server serves, starts the informers,
// feeds the Builder and probes the watches until ctx is done. An API server
// that cannot be reached at start is retried; meanwhile the source is
// unavailable.
func (f *Feed) Start(ctx context.Context) error {
	f.ctx = ctx
	f.publishState(nil)
	dc, err := discovery.NewDiscoveryClientForConfig(f.cfg)
	if err != nil {
		return fmt.Errorf("kube: discovery client: %w", err)
	}
	kinds := f.discover(ctx, dc)
	if ctx.Err() != nil {
		return nil
	}
	// One cache per watched namespace (or one for all of them), each with
	// a watch error handler that knows its namespace: a watch failing in
	// one namespace is a limitation scoped to it, which a reader who
	// cannot see that namespace is not shown.
	var caches []cache.Cache
	for _, ns := range f.watchNamespaces() {
		c, err := cache.New(f.cfg, f.cacheOptions(ns))
		if err != nil {
			return fmt.Errorf("kube: creating the informer cache: %w", err)
		}
		for _, r := range kinds {
			if err := f.inform(ctx, c, r); err != nil {
				return err
			}
		}
		caches = append(caches, c)
	}
	f.health.watched(kinds)
	errc := make(chan error, len(caches))
	for _, c := range caches {
		go func() { errc <- c.Start(ctx) }()
	}
	go f.lag.run(ctx, f.b, f.metrics)
	for _, c := range caches {
		if !c.WaitForCacheSync(ctx) {
			if err := <-errc; err != nil {
				return fmt.Errorf("kube: informer cache: %w", err)
			}
			return nil
		}
	}
	close(f.synced)
	f.opts.Log.Info("Kubernetes fleet listed", "resources", resourceNames(kinds))
	f.publishState(nil)
	probe, err := newProber(f.cfg, f.watchNamespaces(), kinds)
	if err != nil {
		return err
	}
	t := time.NewTicker(f.opts.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case err := <-errc:
			if err != nil {
				return fmt.Errorf("kube: informer cache: %w", err)
			}
			return nil
		case <-t.C:
			kinds = f.rediscover(ctx, dc, caches, kinds)
			probe.kinds = kinds
			f.publishState(probe.run(ctx))
		}
	}
}

// inform starts watching r in c, feeding the Builder.
func (f *Feed) inform(ctx context.Context, c cache.Cache, r resource) error {
	inf, err := c.GetInformer(ctx, r.object(), cache.BlockUntilSynced(false))
	if err != nil {
		return fmt.Errorf("kube: informer on %s: %w", r.name, err)
	}
	if _, err := inf.AddEventHandler(f.handler(r)); err != nil {
		return fmt.Errorf("kube: handler on %s: %w", r.name, err)
	}
	return nil
}

// rediscover asks discovery again, every probe interval, which kinds the
// API server serves, and starts or stops the informers of the CRD-backed
// ones that appeared or went: Pacto's CRD (or ours) installed after the
// feed started is read without a restart, and one removed takes its
// records out of the fleet. It returns the kinds now watched.
//
// Periodic discovery, rather than an informer on CustomResourceDefinitions:
// discovery is open to every authenticated user, so the same code serves
// the operator and `kubepact mcp --fleet --k8s` with a developer's own
// credentials, which rarely may list CRDs; it needs no RBAC beyond what the
// feed has; and it costs two small requests per interval, off the query
// path. A CRD is picked up within one ProbeInterval (10s by default).
func (f *Feed) rediscover(ctx context.Context, dc discovery.DiscoveryInterface, caches []cache.Cache, have []resource) []resource {
	now, crdMissing, err := discoverOnce(dc)
	if err != nil {
		return have // the probes tell an API server that does not answer
	}
	f.health.mu.Lock()
	f.health.crdMissing = crdMissing
	f.health.mu.Unlock()
	same := func(x, y resource) bool { return x.name == y.name && x.gvk == y.gvk }
	var keep, gone []resource
	for _, r := range have {
		if slices.ContainsFunc(now, func(n resource) bool { return same(n, r) }) {
			keep = append(keep, r)
		} else {
			gone = append(gone, r)
		}
	}
	for _, r := range gone {
		for _, c := range caches {
			if err := c.RemoveInformer(ctx, r.object()); err != nil {
				f.opts.Log.Error(err, "Informer of a resource no longer served could not be stopped", "resource", r.name)
			}
		}
		f.forget(r)
		f.opts.Log.Info("Resource no longer served; its records left the fleet", "resource", r.name)
	}
	for _, r := range now {
		if slices.ContainsFunc(have, func(h resource) bool { return same(h, r) }) {
			continue
		}
		ok := true
		for _, c := range caches {
			if err := f.inform(ctx, c, r); err != nil {
				f.opts.Log.Error(err, "Newly served resource could not be watched; retrying at the next probe", "resource", r.name)
				ok = false
				break
			}
		}
		if ok {
			keep = append(keep, r)
			f.opts.Log.Info("Newly served resource watched", "resource", r.name)
		}
	}
	if len(gone) > 0 || len(keep) != len(have) {
		f.health.watched(keep)
		f.health.mu.Lock()
		for k := range f.health.failed {
			if slices.ContainsFunc(gone, func(r resource) bool { return r.name == k.resource }) {
				delete(f.health.failed, k)
			}
		}
		f.health.mu.Unlock()
	}
	return keep
}

// forget takes the records read from a resource that is no longer served
// out of the fleet: its informer is stopped, so no delete events come.
func (f *Feed) forget(r resource) {
	f.mu.Lock()
	switch {
	case r.gvk.Group == PactoGroup:
		for k := range f.pactos {
			f.changed++
			f.b.DeleteTarget(fleetgraph.TargetKey(k.ns, KindPacto, k.name))
		}
		clear(f.pactos)
	case r.gvk.Kind == v1alpha1.ServiceContractKind:
		for _, sc := range f.contracts {
			f.contract(sc, true)
		}
	}
	f.stateDirty = false
	f.mu.Unlock()
	f.publishState(nil)
}

// watchNamespaces are the namespaces the feed watches, one cache each:
// Options.Namespaces, or "" for all of them.
func (f *Feed) watchNamespaces() []string {
	if len(f.opts.Namespaces) == 0 {
		return []string{""}
	}
	return f.opts.Namespaces
}

// cacheOptions are the options of the cache watching ns ("" for all
// namespaces).
func (f *Feed) cacheOptions(ns string) cache.Options {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme) // static registrations: cannot fail
	_ = v1alpha1.AddToScheme(scheme)
	o := cache.Options{
		Scheme:                      scheme,
		DefaultTransform:            transform,
		ReaderFailOnMissingInformer: true,
		DefaultWatchErrorHandler: func(_ context.Context, r *toolscache.Reflector, err error) {
			f.watchFailed(r.TypeDescription(), ns, err)
		},
	}
	if ns != "" {
		o.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	return o
}

// handler turns one resource's events into Builder changes.
func (f *Feed) handler(r resource) toolscache.ResourceEventHandler {
	on := func(obj any, deleted bool) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj, deleted = d.Obj, true
		}
		f.metrics.events.WithLabelValues(r.name).Inc()
		at := f.b.Now()
		f.mu.Lock()
		before := f.changed
		switch o := obj.(type) {
		case *v1alpha1.ServiceContract:
			f.contract(o, deleted)
		case *corev1.Service:
			f.service(o, deleted)
		case *unstructured.Unstructured:
			f.pacto(o, deleted)
		default:
			if k, w, ok := workloadOf(obj); ok {
				f.workload(k, w, deleted)
			}
		}
		queued := f.changed != before
		dirty := f.stateDirty
		f.stateDirty = false
		f.mu.Unlock()
		if queued { // an event that changes no record waits for no snapshot
			f.lag.add(at)
		}
		if dirty {
			f.publishState(nil)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { on(obj, false) },
		UpdateFunc: func(_, obj any) { on(obj, false) },
		DeleteFunc: func(obj any) { on(obj, true) },
	}
}

// contract applies a ServiceContract event. Caller holds mu.
func (f *Feed) contract(sc *v1alpha1.ServiceContract, deleted bool) {
	key := nsName{sc.Namespace, sc.Name}
	prev := f.contracts[key]
	touched := map[wlKey]struct{}{}
	if prev != nil {
		k := wlKey{prev.Namespace, prev.Spec.TargetRef.Kind, prev.Spec.TargetRef.Name}
		delete(f.byTarget[k], prev.Name)
		touched[k] = struct{}{}
		if ref := prev.Spec.ServiceRef; ref != nil {
			sk := nsName{prev.Namespace, ref.Name}
			delete(f.bySvc[sk], prev.Name)
			if len(f.bySvc[sk]) == 0 {
				delete(f.bySvc, sk)
			}
		}
	}
	if prev != nil && prev.Spec.Bundle.ConfigMapRef != nil || !deleted && sc.Spec.Bundle.ConfigMapRef != nil {
		f.stateDirty = true
	}
	why := ""
	if !deleted {
		why = unusableStatus(sc)
	}
	if why != f.badStatus[key] {
		f.stateDirty = true
		if why == "" {
			delete(f.badStatus, key)
		} else {
			f.badStatus[key] = why
		}
	}
	if deleted {
		delete(f.contracts, key)
	} else {
		f.contracts[key] = sc
		k := wlKey{sc.Namespace, sc.Spec.TargetRef.Kind, sc.Spec.TargetRef.Name}
		if f.byTarget[k] == nil {
			f.byTarget[k] = map[string]struct{}{}
		}
		f.byTarget[k][sc.Name] = struct{}{}
		touched[k] = struct{}{}
		if ref := sc.Spec.ServiceRef; ref != nil {
			sk := nsName{sc.Namespace, ref.Name}
			if f.bySvc[sk] == nil {
				f.bySvc[sk] = map[string]struct{}{}
			}
			f.bySvc[sk][sc.Name] = struct{}{}
		}
	}
	for k := range f.byContract[key] {
		touched[k] = struct{}{}
	}
	f.revision(key)
	for k := range touched {
		f.target(k)
	}
}

// workload applies a Deployment, StatefulSet or DaemonSet event. Caller
// holds mu.
func (f *Feed) workload(k wlKey, w *workload, deleted bool) {
	if prev := f.workloads[k]; prev != nil && prev.contract != "" {
		delete(f.byContract[nsName{k.ns, prev.contract}], k)
	}
	if deleted {
		delete(f.workloads, k)
	} else {
		f.workloads[k] = w
		if w.contract != "" {
			c := nsName{k.ns, w.contract}
			if f.byContract[c] == nil {
				f.byContract[c] = map[wlKey]struct{}{}
			}
			f.byContract[c][k] = struct{}{}
		}
	}
	f.target(k)
}

// service applies a Service event: the targets of the ServiceContracts
// naming it change. Caller holds mu.
func (f *Feed) service(s *corev1.Service, deleted bool) {
	key := nsName{s.Namespace, s.Name}
	if deleted {
		delete(f.services, key)
	} else {
		f.services[key] = s
	}
	for name := range f.bySvc[key] {
		ck := nsName{s.Namespace, name}
		sc := f.contracts[ck]
		f.target(wlKey{ck.ns, sc.Spec.TargetRef.Kind, sc.Spec.TargetRef.Name})
		for k := range f.byContract[ck] {
			f.target(k)
		}
	}
}

// pacto applies a Pacto CR event: one target, read from its status.
func (f *Feed) pacto(u *unstructured.Unstructured, deleted bool) {
	key := nsName{u.GetNamespace(), u.GetName()}
	if deleted {
		delete(f.pactos, key)
		f.changed++
		f.b.DeleteTarget(fleetgraph.TargetKey(u.GetNamespace(), KindPacto, u.GetName()))
		return
	}
	f.pactos[key] = struct{}{}
	f.changed++
	if err := f.b.UpsertTarget(pactoTarget(u, f.opts.SourceID)); err != nil {
		f.opts.Log.Error(err, "Pacto CR left out of the fleet", "namespace", u.GetNamespace(), "name", u.GetName())
	}
}

// boundContract is the ServiceContract a workload runs: the one its
// annotation names, else the first by name whose targetRef names it.
// Caller holds mu.
func (f *Feed) boundContract(k wlKey) *v1alpha1.ServiceContract {
	if w := f.workloads[k]; w != nil && w.contract != "" {
		if sc := f.contracts[nsName{k.ns, w.contract}]; sc != nil {
			return sc
		}
	}
	names := f.byTarget[k]
	if len(names) == 0 {
		return nil
	}
	first := ""
	for n := range names {
		if first == "" || n < first {
			first = n
		}
	}
	return f.contracts[nsName{k.ns, first}]
}

// target hands the Builder a workload's target as it is now, or deletes
// it when no ServiceContract binds the workload. Caller holds mu.
func (f *Feed) target(k wlKey) {
	sc := f.boundContract(k)
	if sc == nil {
		if len(f.byTarget[k]) == 0 {
			delete(f.byTarget, k)
		}
		if f.emitted[k] {
			f.changed++
			f.b.DeleteTarget(fleetgraph.TargetKey(k.ns, k.kind, k.name))
			delete(f.emitted, k)
		}
		return
	}
	var svc *corev1.Service
	svcName := ""
	if ref := sc.Spec.ServiceRef; ref != nil {
		svcName, svc = ref.Name, f.services[nsName{k.ns, ref.Name}]
	}
	f.changed++
	if err := f.b.UpsertTarget(targetOf(k, sc, f.workloads[k], svc, svcName, f.opts.SourceID)); err != nil {
		f.opts.Log.Error(err, "Workload left out of the fleet", "namespace", k.ns, "kind", k.kind, "name", k.name)
		return
	}
	f.emitted[k] = true
}

// revision records the revision a ServiceContract contributes now and
// republishes the revisions that changed holders. Caller holds mu.
func (f *Feed) revision(key nsName) {
	var rev *fleetgraph.Revision
	if sc := f.contracts[key]; sc != nil {
		rev = revisionOf(sc, f.opts.SourceID)
	}
	newKey := ""
	if rev != nil {
		newKey = rev.Key()
	}
	if old := f.scRev[key]; old != "" && old != newKey {
		delete(f.holders[old], key)
		delete(f.scRev, key)
		f.publishRevision(old)
	}
	if rev == nil {
		return
	}
	f.scRev[key] = newKey
	if f.holders[newKey] == nil {
		f.holders[newKey] = map[nsName]struct{}{}
	}
	f.holders[newKey][key] = struct{}{}
	f.publishRevision(newKey)
}

// publishRevision hands the Builder a revision as the ServiceContracts
// holding it publish it now, or deletes it when none does. ServiceContracts
// in several namespaces may hold one digest: the revision carries all
// their namespaces as its scopes (so a reader who sees any of them sees
// it), and its content comes from the first holder by namespace and name,
// so it does not depend on the order events arrived in. Caller holds mu.
func (f *Feed) publishRevision(revKey string) {
	hs := f.holders[revKey]
	if len(hs) == 0 {
		delete(f.holders, revKey)
		delete(f.bundles, revKey)
		f.changed++
		f.b.DeleteRevision(revKey)
		return
	}
	var first nsName
	scopes := make([]string, 0, len(hs))
	for k := range hs {
		if len(scopes) == 0 || k.ns < first.ns || k.ns == first.ns && k.name < first.name {
			first = k
		}
		scopes = append(scopes, k.ns) // the Builder sorts and deduplicates
	}
	rev := revisionOf(f.contracts[first], f.opts.SourceID)
	rev.Scopes = scopes
	bs := f.bundles[revKey]
	if bs == nil && f.opts.Bundles != nil && rev.ResolvedRef != "" {
		bs = &bundleState{loading: true}
		f.bundles[revKey] = bs
		go f.loadBundle(revKey, rev.ResolvedRef)
	}
	if bs != nil {
		rev = enrich(rev, bs.rev)
	}
	f.changed++
	if err := f.b.UpsertRevision(rev); err != nil {
		f.opts.Log.Error(err, "ServiceContract revision left out of the fleet", "namespace", first.ns, "name", first.name)
	}
}

// loadBundle reads one revision's bundle, at most bundleLoads at once,
// and hands the Builder the completed revision of every ServiceContract
// holding it.
func (f *Feed) loadBundle(revKey, ref string) {
	f.loads <- struct{}{}
	defer func() { <-f.loads }()
	ctx, cancel := context.WithTimeout(f.ctx, bundleLoadTimeout)
	defer cancel()
	var derived *fleetgraph.Revision
	b, err := f.opts.Bundles.Load(ctx, ref)
	if err == nil {
		derived, err = fleetgraph.NewRevision(ctx, b, nil)
	}
	f.mu.Lock()
	bs := f.bundles[revKey]
	if bs == nil { // no ServiceContract holds it any more
		f.mu.Unlock()
		return
	}
	bs.loading, bs.rev, bs.err = false, derived, nil
	if err != nil {
		bs.err = sourceError(err)
		bs.failures++
		wait := min(f.retry<<min(bs.failures-1, 10), bundleRetryMax)
		f.opts.Log.Info("Bundle of a ServiceContract revision could not be read; its dependencies are unknown until a retry succeeds", "ref", ref, "retryIn", wait, "error", err.Error())
		time.AfterFunc(wait, func() { f.retryBundle(revKey, ref, bs) })
	}
	f.publishRevision(revKey)
	f.mu.Unlock()
	if err != nil {
		f.publishState(nil)
	}
}

// retryBundle reads a bundle again after a failure, unless the revision
// is gone or was read meanwhile.
func (f *Feed) retryBundle(revKey, ref string, was *bundleState) {
	if f.ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if bs := f.bundles[revKey]; bs == was && bs.err != nil && !bs.loading {
		bs.loading = true
		go f.loadBundle(revKey, ref)
	}
}

// resource is one kind the feed watches.
type resource struct {
	name string // plural.group, as RBAC and limitations name it
	gvk  schema.GroupVersionKind
	gvr  schema.GroupVersionResource
}

// object is an empty object of the kind, for the cache.
func (r resource) object() client.Object {
	switch r.gvk.Kind {
	case KindDeployment:
		return &appsv1.Deployment{}
	case KindStatefulSet:
		return &appsv1.StatefulSet{}
	case KindDaemonSet:
		return &appsv1.DaemonSet{}
	case "Service":
		return &corev1.Service{}
	case v1alpha1.ServiceContractKind:
		return &v1alpha1.ServiceContract{}
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(r.gvk)
	return u
}

func resourceNames(rs []resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.name
	}
	return out
}
