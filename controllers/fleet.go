package controllers

import (
	"context"
	"net"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/mcp"
)

// The live fleet's read path: the feed (fleetgraph/kube), the Builder it
// drives and the MCP server answering from the Builder's snapshots are
// Runnables on every replica; only the reconciler is leader-elected.
// The feed reads Pacto's own CRs when their CRD is installed:
// +kubebuilder:rbac:groups=pacto.trianalab.io,resources=pactos,verbs=get;list;watch

// FleetBuilder publishes the fleet Builder's queued changes as snapshots
// until the manager stops.
type FleetBuilder struct {
	Builder *fleetgraph.Builder
}

// Start runs the Builder's publisher.
func (r FleetBuilder) Start(ctx context.Context) error { return r.Builder.Run(ctx) }

// NeedLeaderElection is false: every replica keeps its own snapshots.
func (FleetBuilder) NeedLeaderElection() bool { return false }

// MCPServer serves MCP over Streamable HTTP on Listener until the manager
// stops, then drains (mcp.Server.Serve).
type MCPServer struct {
	Server   *mcp.Server
	Listener net.Listener
}

// Start serves until ctx is done.
func (r MCPServer) Start(ctx context.Context) error { return r.Server.Serve(ctx, r.Listener) }

// NeedLeaderElection is false: every replica answers queries.
func (MCPServer) NeedLeaderElection() bool { return false }
