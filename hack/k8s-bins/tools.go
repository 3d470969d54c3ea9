//go:build tools

// Package tools pins the main packages built from this module: the control
// plane binaries the envtest suites run (kube-apiserver, etcd,
// kube-controller-manager, kubectl) and the node binaries the real-node
// e2e back end runs (kubelet, kube-scheduler, kube-proxy; hack/realnode).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
