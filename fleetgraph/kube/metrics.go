package kube

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubepact/kubepact/fleetgraph"
)

// metrics are the feed's Prometheus collectors.
type metrics struct {
	lag    prometheus.Histogram
	events *prometheus.CounterVec
	up     prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, b *fleetgraph.Builder) (*metrics, error) {
	m := &metrics{
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kubepact_fleet_feed_lag_seconds",
			Help:    "Time from a Kubernetes event reaching the fleet feed to the Builder applying it to a snapshot.",
			Buckets: []float64{.01, .025, .05, .1, .15, .2, .25, .5, 1, 2.5, 5, 10}}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "kubepact_fleet_feed_events_total",
			Help: "Kubernetes events the fleet feed received, by resource."}, []string{"resource"}),
		up: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kubepact_fleet_feed_up",
			Help: "1 when every watched resource is listed and watched, 0 while the fleet is partial or unavailable."}),
	}
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "kubepact_fleet_snapshot_age_seconds",
		Help: "Seconds since the current fleet snapshot was published."},
		func() float64 { return b.Now().Sub(b.Current().AsOf()).Seconds() })
	if reg == nil {
		return m, nil
	}
	// A second feed in one process (tests) reports through the first's
	// collectors; its snapshot age is the first Builder's.
	var err error
	if m.lag, err = register(reg, m.lag); err != nil {
		return nil, err
	}
	if m.events, err = register(reg, m.events); err != nil {
		return nil, err
	}
	if m.up, err = register(reg, m.up); err != nil {
		return nil, err
	}
	if _, err = register(reg, prometheus.Collector(age)); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c, or returns the collector registered before it
// under the same name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if are, dup := errors.AsType[prometheus.AlreadyRegisteredError](err); dup {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}

// maxLagSamples bounds the event times waiting for a publish: past it the
// oldest are dropped (a Builder that is not running).
const maxLagSamples = 1 << 14

// lagQueue holds the arrival times of events the Builder has not applied
// yet.
type lagQueue struct {
	mu      sync.Mutex
	pending []time.Time
}

func (q *lagQueue) add(at time.Time) {
	q.mu.Lock()
	if len(q.pending) == maxLagSamples {
		q.pending = q.pending[1:]
	}
	q.pending = append(q.pending, at)
	q.mu.Unlock()
}

// run observes, each time the Builder applies a batch, the lag of every
// event that arrived before it.
func (q *lagQueue) run(ctx context.Context, b *fleetgraph.Builder, m *metrics) {
	_, next := b.Applied()
	for {
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
		var at time.Time
		at, next = b.Applied()
		q.mu.Lock()
		n := 0
		for n < len(q.pending) && !q.pending[n].After(at) {
			m.lag.Observe(at.Sub(q.pending[n]).Seconds())
			n++
		}
		q.pending = q.pending[n:]
		q.mu.Unlock()
	}
}
