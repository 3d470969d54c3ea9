//go:build !sidecaronly

package main

import (
	"context"
	"errors"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/mcp"
)

// k8sFleetSyncTimeout bounds how long `kubepact mcp --k8s` waits for the
// first list before it serves (a partial fleet, which says so, after it).
const k8sFleetSyncTimeout = time.Minute

// k8sFleetOptions is `kubepact mcp`'s --k8s group: the fleet read live
// from a cluster with the caller's own credentials.
type k8sFleetOptions struct {
	enabled    bool
	kubeconfig string
	namespaces []string
}

func (o *k8sFleetOptions) BindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.enabled, "k8s", false, "fleet source: the cluster of the current kubeconfig context, watched live (ServiceContracts, workloads, Services, Pacto CRs) with your own credentials; implies --fleet")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file for --k8s (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringSliceVar(&o.namespaces, "namespace", nil, "with --k8s, read only these namespaces (repeatable or comma-separated; default: all)")
}

// validate refuses --k8s combined with the file and registry sources, and
// the --k8s flags without --k8s.
func (o *k8sFleetOptions) validate(f *mcp.FleetOptions) error {
	switch {
	case !o.enabled && (o.kubeconfig != "" || len(o.namespaces) > 0):
		return errors.New("--kubeconfig and --namespace configure the --k8s fleet source: add --k8s")
	case o.enabled && (len(f.Local) > 0 || len(f.OCI) > 0 || f.TargetState != ""):
		return errors.New("--k8s reads the fleet from the cluster; it cannot be combined with --local, --oci or --target-state")
	}
	for _, ns := range o.namespaces {
		if ns == "" {
			return errors.New("--namespace: an empty namespace name is not accepted")
		}
	}
	return nil
}

// start starts the feed and its Builder until ctx is done, waits (bounded)
// for the first list, and sets the Builder as the fleet's.
func (o *k8sFleetOptions) start(ctx context.Context, f *mcp.FleetOptions, reg *oci.Client) error {
	cfg, err := kubeRESTConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	log := logr.FromContextOrDiscard(ctx).WithName("fleet")
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Freshness: f.Freshness, Retention: f.Retention})
	feed, err := kube.NewFeed(cfg, b, &kube.Options{Namespaces: o.namespaces, Log: log,
		Bundles: source.NewRefLoader(&source.RefLoaderOptions{Client: reg})})
	if err != nil {
		return err
	}
	go func() {
		if err := feed.Start(ctx); err != nil {
			log.Error(err, "The Kubernetes fleet feed stopped; answers keep the last snapshot")
		}
	}()
	go func() { _ = b.Run(ctx) }() // returns nil when ctx is done
	wctx, cancel := context.WithTimeout(ctx, k8sFleetSyncTimeout)
	defer cancel()
	if err := feed.WaitSynced(wctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Info("The cluster's first list is not finished; serving a partial fleet that says so", "after", k8sFleetSyncTimeout)
	} else {
		b.Flush()
	}
	f.Enabled, f.Builder = true, b
	return nil
}
