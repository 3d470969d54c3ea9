//go:build tools

// Package tools pins the NetworkPolicy enforcer the real node was tried
// with: kube-network-policies, built from the Go module proxy in this module
// of its own so that the product's go.mod does not grow:
//
//	cd hack/netpol && CGO_ENABLED=0 go build -trimpath -o kube-network-policies sigs.k8s.io/kube-network-policies/cmd
//
// On the project's machines it starts but installs no rule: it queues
// packets with nftables' queue expression, and their kernel is built
// without CONFIG_NFT_QUEUE (README, "NetworkPolicy is not enforced on the
// real node").
package tools

import (
	_ "sigs.k8s.io/kube-network-policies/cmd"
)
