package controllers

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// kubepact's own reconciler metrics, served on the manager's /metrics next to
// controller-runtime's (reconcile counts, durations, workqueue depth).
var (
	bundleResolved = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubepact_servicecontract_bundle_resolutions_total",
		Help: "Bundles resolved to a digest by the ServiceContract reconciler, by source (oci, configmap).",
	}, []string{"source"})
	tagMoves = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kubepact_servicecontract_tag_moves_total",
		Help: "Tags found naming a new digest, and followed.",
	})
)

func init() {
	metrics.Registry.MustRegister(bundleResolved, tagMoves)
}
