//go:build tools

// Package tools pins the NetworkPolicy enforcer the real-node e2e tries:
// kube-network-policies, built from the Go module proxy in this module of
// its own so that the product's go.mod does not grow.
package tools

import (
	_ "sigs.k8s.io/kube-network-policies/cmd"
)
