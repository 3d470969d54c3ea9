//go:build tools

// Package tools pins the main packages built from this module: helm, which
// renders, lints and installs charts/kubepact, and helm-unittest's standalone
// runner (untt), which runs the chart's unit suites without helm plugins.
package tools

import (
	_ "github.com/helm-unittest/helm-unittest/cmd/helm-unittest"
	_ "helm.sh/helm/v3/cmd/helm"
)
