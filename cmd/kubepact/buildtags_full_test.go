//go:build !sidecaronly

package main

// testBuildTags are the build tags of this test binary, which TestMain
// builds kubepactBin with: the full binary here.
var testBuildTags []string
