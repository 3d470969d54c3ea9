#!/usr/bin/env bash
# Build helm and helm-unittest's standalone runner (untt) from this builder
# module (pinned by its go.mod/go.sum, fetched from the Go module proxy only)
# into $OUT (default: <repo>/bin) as helm-<version> and
# helm-unittest-<version>. A binary already there is reused.
#
# A plain `go build` of helm leaves its version at "v3.22" and its default
# Kubernetes version at v1.20.0, so a chart with kubeVersion ">=1.30.0-0"
# would not render; both binaries are stamped the way helm's own Makefile
# does it, with the minor of kubepact's client-go.
# helm-unittest renders through helm's chartutil, so it needs the same stamp.
set -euo pipefail
cd "$(dirname "$0")"
HELM_VERSION=$(go list -m -f '{{.Version}}' helm.sh/helm/v3)
UNITTEST_VERSION=$(go list -m -f '{{.Version}}' github.com/helm-unittest/helm-unittest)
# The Kubernetes minor kubepact itself builds against (its client-go,
# v0.<minor>.<patch>): the version helm assumes when no cluster is asked.
CLIENT_GO=$(cd ../.. && go list -m -f '{{.Version}}' k8s.io/client-go)
minor=$(echo "$CLIENT_GO" | cut -d. -f2)
OUT=${OUT:-$(cd ../.. && pwd)/bin}
K8S="-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$minor"
K8S+=" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$minor"
mkdir -p "$OUT"

build() { # build <output> <package> <ldflags>
  if [ -x "$OUT/$1" ]; then return; fi
  echo "helm-bins: building $1 (the first build takes minutes)" >&2
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $3" -o "$OUT/$1.tmp" "$2"
  mv "$OUT/$1.tmp" "$OUT/$1"
}
build "helm-$HELM_VERSION" helm.sh/helm/v3/cmd/helm \
  "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean $K8S"
build "helm-unittest-$UNITTEST_VERSION" github.com/helm-unittest/helm-unittest/cmd/helm-unittest \
  "-X github.com/helm-unittest/helm-unittest/internal/build.version=$UNITTEST_VERSION $K8S"
