//go:build sidecaronly

package main

// testBuildTags are the build tags of this test binary, which TestMain
// builds kubepactBin with: here the slim sidecar build, so that the tests
// compiled into it (help, version, flags, the sidecar's refusals and
// process) run against the binary that injected sidecars run.
var testBuildTags = []string{"sidecaronly"}
