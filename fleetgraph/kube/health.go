package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kubepact/kubepact/api/v1alpha1"
	fail "github.com/kubepact/kubepact/bundle/failure"
	"github.com/kubepact/kubepact/fleetgraph"
)

// PactoGroup is the API group of Pacto's own CRs, read when installed.
const PactoGroup = "pacto.trianalab.io"

// LimitContractsMissing is the limitation the feed adds when the
// ServiceContract CRD is absent.
const LimitContractsMissing = "SERVICE_CONTRACTS_MISSING"

// health is what the feed knows about its watches: which resources it
// watches, which failed and since when, and what it last told the Builder.
type health struct {
	mu         sync.Mutex
	resources  []resource
	failed     map[watchKey]*failure
	discovery  *fleetgraph.SourceError
	crdMissing bool
	lastOK     time.Time
	published  string // a fingerprint of the state last handed to the Builder
}

type failure struct {
	err   *fleetgraph.SourceError
	since time.Time
}

// watchKey names what a watch or probe reads: a resource in a namespace,
// or in all of them (ns "").
type watchKey struct{ resource, ns string }

func (h *health) init() { h.failed = map[watchKey]*failure{} }

func (h *health) watched(rs []resource) {
	h.mu.Lock()
	h.resources = rs
	h.mu.Unlock()
}

// watchFailed records a failed list or watch, in namespace ns ("" for
// all), of the resource whose reflector has this type description; the
// next good probe clears it.
func (f *Feed) watchFailed(desc, ns string, err error) {
	if f.ctx != nil && f.ctx.Err() != nil {
		return // stopping: the watches end on purpose
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		// A watch the server closed, or a resource version compacted
		// away: the reflector lists again, nothing is lost. An API server
		// that went away fails the next probe.
		return
	}
	f.health.mu.Lock()
	name := ""
	for _, r := range f.health.resources {
		if strings.HasSuffix(desc, "."+r.gvk.Kind) || strings.HasSuffix(desc, "Kind="+r.gvk.Kind) {
			name = r.name
		}
	}
	f.health.mu.Unlock()
	if name == "" {
		name = desc
	}
	f.opts.Log.Info("Kubernetes watch failed; the fleet is partial until it recovers", "resource", name, "namespace", ns, "error", err.Error())
	f.publishState(map[watchKey]error{{name, ns}: err})
}

// sourceError is the source error of a failure of this feed: an API server
// answer is classified by its Status reason (the code, never the text),
// anything else (a bundle load, the connection) by fleetgraph.
func sourceError(err error) *fleetgraph.SourceError {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fleetgraph.SourceErrorOf(fail.NotFound)
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return fleetgraph.SourceErrorOf(fail.AuthFailed)
	}
	return fleetgraph.SanitizeError(err)
}

// isStatus reports whether err is an answer of the API server (a Status),
// rather than a failure to reach it.
func isStatus(err error) bool {
	var st apierrors.APIStatus
	return errors.As(err, &st)
}

// maxBadStatusListed bounds the ServiceContracts with an unusable status
// listed by name per namespace; the rest are counted.
const maxBadStatusListed = 5

// nsCount counts something per namespace and keeps the first example.
type nsCount struct {
	n       int
	example string
}

func countIn(m map[string]*nsCount, ns, example string) {
	c := m[ns]
	if c == nil {
		c = &nsCount{example: example}
		m[ns] = c
	}
	c.n++
}

// publishState records probe results (nil error: the resource answered)
// and hands the Builder the source's state and limitations, when they
// changed since it last did.
//
// A limitation about a namespace — a watch failing in a namespace the
// feed watches alone, bundles of revisions published there that could not
// be read, a ServiceContract there whose status is unusable — carries the
// namespace as its Scope, so a reader who cannot see the namespace is not
// shown it. One about the cluster as a whole — a resource that cannot be
// watched in any namespace, a missing CRD, bundles not read at all — is
// ClusterWide and shown to every reader: it names no namespace.
func (f *Feed) publishState(results map[watchKey]error) {
	now := f.b.Now().UTC()
	f.mu.Lock()
	fromConfigMaps := map[string]*nsCount{}
	for k := range f.scRev {
		if sc := f.contracts[k]; sc != nil && sc.Spec.Bundle.ConfigMapRef != nil {
			countIn(fromConfigMaps, k.ns, "")
		}
	}
	unread := map[string]*nsCount{}
	for revKey, bs := range f.bundles {
		if bs.err == nil {
			continue
		}
		seen := map[string]bool{}
		for h := range f.holders[revKey] {
			if !seen[h.ns] {
				seen[h.ns] = true
				countIn(unread, h.ns, bs.err.Message)
			}
		}
	}
	bad := make([]nsName, 0, len(f.badStatus))
	for k := range f.badStatus {
		bad = append(bad, k)
	}
	slices.SortFunc(bad, func(x, y nsName) int { return cmp.Or(strings.Compare(x.ns, y.ns), strings.Compare(x.name, y.name)) })
	badMsgs := make([]string, len(bad))
	for i, k := range bad {
		badMsgs[i] = f.badStatus[k]
	}
	f.mu.Unlock()

	h := &f.health
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, err := range results {
		if k.ns != "" && err != nil && !isStatus(err) {
			// The API server did not answer at all: that is about the
			// cluster, not the namespace the request named.
			k.ns = ""
		}
		switch {
		case err == nil:
			delete(h.failed, k)
			delete(h.failed, watchKey{k.resource, ""}) // it answered: it is reachable
		case h.failed[k] == nil:
			h.failed[k] = &failure{err: sourceError(err), since: now}
		default:
			h.failed[k].err = sourceError(err)
		}
	}
	st := fleetgraph.SourceState{ID: f.opts.SourceID, Kind: SourceKind, Status: fleetgraph.SourceAvailable, ObservedAt: now}
	var lims []fleetgraph.Limitation
	synced := false
	select {
	case <-f.synced:
		synced = true
	default:
	}
	switch {
	case h.discovery != nil:
		st.Status, st.Error = fleetgraph.SourceUnavailable, h.discovery
	case !synced:
		st.Status, st.Error = fleetgraph.SourceUnavailable, &fleetgraph.SourceError{Code: fleetgraph.ErrUnavailable, Message: "the first list of the watched resources has not finished"}
	}
	partial := func(err *fleetgraph.SourceError) {
		if st.Status == fleetgraph.SourceAvailable {
			st.Status, st.Error = fleetgraph.SourcePartial, err
		}
	}
	keys := make([]watchKey, 0, len(h.failed))
	for k := range h.failed {
		keys = append(keys, k)
	}
	// Cluster-wide failures first: the source's error is one of them
	// when there is one, since every reader sees the source's state.
	slices.SortFunc(keys, func(x, y watchKey) int {
		return cmp.Or(strings.Compare(x.ns, y.ns), strings.Compare(x.resource, y.resource)) // "" (all namespaces) first
	})
	for _, k := range keys {
		fl := h.failed[k]
		since := fl.since.Format(time.RFC3339)
		if k.ns == "" {
			partial(fl.err)
			lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: st.ID, Subject: k.resource, ClusterWide: true,
				Message: fmt.Sprintf("%s could not be watched since %s (%s: %s); its records are kept as last seen", k.resource, since, fl.err.Code, fl.err.Message)})
			continue
		}
		partial(&fleetgraph.SourceError{Code: fl.err.Code, Message: "a watched namespace could not be read; the limitations of the namespaces you can see say which"})
		lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: st.ID, Subject: k.resource, Scope: k.ns,
			Message: fmt.Sprintf("%s in namespace %s could not be watched since %s (%s: %s); its records there are kept as last seen", k.resource, k.ns, since, fl.err.Code, fl.err.Message)})
	}
	if h.crdMissing {
		partial(nil)
		lims = append(lims, fleetgraph.Limitation{Code: LimitContractsMissing, Source: st.ID, Subject: "servicecontracts.kubepact.dev", ClusterWide: true,
			Message: "the ServiceContract CRD (servicecontracts.kubepact.dev) is not installed: contract revisions and the workloads they bind are missing; only Pacto CRs and annotated workloads are read"})
	}
	for _, ns := range slices.Sorted(maps.Keys(unread)) {
		c := unread[ns]
		partial(nil)
		lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: st.ID, Subject: "bundles", Scope: ns,
			Message: fmt.Sprintf("the bundles of %d revisions published in namespace %s could not be read, so their dependencies are unknown (for example: %s)", c.n, ns, c.example)})
	}
	for _, ns := range slices.Sorted(maps.Keys(fromConfigMaps)) {
		lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: st.ID, Subject: "bundles", Scope: ns,
			Message: fmt.Sprintf("%d revisions in namespace %s come from ConfigMap bundles, which the fleet does not read (it watches no ConfigMaps): their dependencies are unknown", fromConfigMaps[ns].n, ns)})
	}
	listed := map[string]int{}
	for i, k := range bad {
		if listed[k.ns] < maxBadStatusListed {
			lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitRecordInvalid, Source: st.ID, Subject: k.ns + "/" + k.name, Scope: k.ns, Message: badMsgs[i]})
		}
		listed[k.ns]++
	}
	for _, ns := range slices.Sorted(maps.Keys(listed)) {
		if n := listed[ns] - maxBadStatusListed; n > 0 {
			lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitRecordInvalid, Source: st.ID, Subject: ns, Scope: ns,
				Message: fmt.Sprintf("and %d more ServiceContracts in namespace %s whose status the fleet cannot use", n, ns)})
		}
	}
	if f.opts.Bundles == nil {
		lims = append(lims, fleetgraph.Limitation{Code: fleetgraph.LimitSourcePartial, Source: st.ID, Subject: "bundles", ClusterWide: true,
			Message: "bundles are not read: revisions carry what ServiceContract status says, without dependencies"})
	}
	if st.Status == fleetgraph.SourceAvailable {
		h.lastOK = now
	}
	st.LastSuccessfulSync = h.lastOK
	fp := fmt.Sprint(st.Status, st.Error, lims)
	if fp == h.published {
		return
	}
	h.published = fp
	f.metrics.up.Set(boolGauge(st.Status == fleetgraph.SourceAvailable))
	f.b.SetSource(st, lims...)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Resources the feed always watches.
var builtin = []resource{
	{name: "deployments.apps", gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: KindDeployment}, gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}},
	{name: "statefulsets.apps", gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: KindStatefulSet}, gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}},
	{name: "daemonsets.apps", gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: KindDaemonSet}, gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}},
	{name: "services", gvk: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, gvr: schema.GroupVersionResource{Version: "v1", Resource: "services"}},
}

// discover lists the kinds to watch: the built-in ones, ServiceContracts
// when their CRD is installed and Pacto CRs when theirs is. An API server
// that cannot be reached is asked again every ProbeInterval until ctx is
// done (nil then); meanwhile the source is unavailable.
func (f *Feed) discover(ctx context.Context, dc discovery.DiscoveryInterface) []resource {
	for {
		kinds, crdMissing, err := discoverOnce(dc)
		f.health.mu.Lock()
		f.health.discovery = sourceError(err)
		f.health.crdMissing = crdMissing
		f.health.mu.Unlock()
		if err == nil {
			return kinds
		}
		f.opts.Log.Info("Kubernetes API discovery failed; retrying", "error", err.Error())
		f.publishState(nil)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(f.opts.ProbeInterval):
		}
	}
}

func discoverOnce(dc discovery.DiscoveryInterface) (kinds []resource, crdMissing bool, err error) {
	kinds = slices.Clone(builtin)
	gv := v1alpha1.GroupVersion
	if _, err := dc.ServerResourcesForGroupVersion(gv.String()); err == nil {
		kinds = append(kinds, resource{name: "servicecontracts." + gv.Group, gvk: gv.WithKind(v1alpha1.ServiceContractKind), gvr: gv.WithResource("servicecontracts")})
	} else if apierrors.IsNotFound(err) {
		crdMissing = true
	} else {
		return nil, false, fmt.Errorf("discovering %s: %w", gv, err)
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		return nil, false, fmt.Errorf("discovering API groups: %w", err)
	}
	for _, g := range groups.Groups {
		if g.Name != PactoGroup {
			continue
		}
		list, err := dc.ServerResourcesForGroupVersion(g.PreferredVersion.GroupVersion)
		if err != nil {
			return nil, false, fmt.Errorf("discovering %s: %w", g.PreferredVersion.GroupVersion, err)
		}
		pgv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, false, err
		}
		for _, r := range list.APIResources {
			if r.Kind == "Pacto" && !strings.Contains(r.Name, "/") {
				kinds = append(kinds, resource{name: r.Name + "." + PactoGroup, gvk: pgv.WithKind("Pacto"), gvr: pgv.WithResource(r.Name)})
			}
		}
	}
	return kinds, crdMissing, nil
}

// prober lists one item of each watched resource in each watched
// namespace (or in all of them), metadata only: the probe that tells a
// recovered API server from one still down.
type prober struct {
	mc         metadata.Interface
	namespaces []string // "" for all
	kinds      []resource
}

func newProber(cfg *rest.Config, namespaces []string, kinds []resource) (*prober, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: metadata client: %w", err)
	}
	return &prober{mc: mc, namespaces: namespaces, kinds: kinds}, nil
}

func (p *prober) run(ctx context.Context) map[watchKey]error {
	out := map[watchKey]error{}
	for _, ns := range p.namespaces {
		for _, r := range p.kinds {
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := p.mc.Resource(r.gvr).Namespace(ns).List(cctx, metav1.ListOptions{Limit: 1})
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			out[watchKey{r.name, ns}] = err
		}
	}
	return out
}
