// Package sidecar is the third shape of the binary: the MCP server in a
// Pod whose tools reach only the service beside it.
//
// # Config
//
// Config is everything a sidecar runs with. The injection webhook builds
// one per Pod and writes it as a container (podspec.Container, whose
// command line is Config.Args); the sidecar command binds its flags into one and Run
// starts from it; the operator computes the tool surface of one (ToolSurface;
// ToolSurfaces for every tool mode from one projection) to record it on the
// ServiceContract. Args and the command's flags round-trip:
// a Config written by Args and parsed by `kubepact sidecar` is the same
// Config.
//
// # Runtime
//
// Run starts a sidecar from its Config and serves until its context ends:
// the probes (ServeHealth, with ReadyDetails on /readyz?verbose), the
// bundle loaded and held to its digest pin (CheckDigest), its tools
// projected, the MCP endpoint, readiness, the memory settling after load
// (SettleMemory, then ReleaseStartupPages: the executable's pages that
// only start-up ran leave the resident set), and unready on SIGTERM while
// calls drain. The loaders
// and the projection come from the command (Loaders): `kubepact mcp` and
// `check` share them and their errors name the command's flags. A failure
// before ready is a StartError naming its Stage, which the command says
// in flag terms. A packed bundle file is read by bundle.LoadLayerFile.
//
// # Imports
//
// It may import bundle and mcp; never Kubernetes packages (k8s.io,
// sigs.k8s.io: the container spec is its sub-package podspec),
// controllers or cmd.
package sidecar
