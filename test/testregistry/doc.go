// Package testregistry runs a real OCI distribution registry in process on
// loopback, for tests that push and pull through the network path the
// product uses instead of faking it.
//
// It is built on github.com/distribution/distribution/v3 with in-memory
// storage and, when asked, htpasswd basic authentication. That module brings
// a large dependency tree, so only _test.go files may import this package:
// the kubepact binary must never link it. It imports nothing from kubepact.
package testregistry
