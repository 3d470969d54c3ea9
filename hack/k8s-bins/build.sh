#!/usr/bin/env bash
# Build the control-plane binaries the envtest suites run, from this builder
# module (pinned by its go.mod/go.sum, fetched from the Go module proxy only),
# into $OUT (default: <repo>/bin/k8s/<version>). A binary already there is
# reused. CMDS picks the Kubernetes commands; etcd is always built.
set -euo pipefail
cd "$(dirname "$0")"
K8S_VERSION=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
ETCD_VERSION=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
OUT=${OUT:-$(cd ../.. && pwd)/bin/k8s/$K8S_VERSION}
minor=$(echo "$K8S_VERSION" | cut -d. -f2)
LDF="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDF+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
mkdir -p "$OUT"
for cmd in ${CMDS:-kube-apiserver kube-controller-manager kubectl}; do
  if [ -x "$OUT/$cmd" ]; then continue; fi
  echo "k8s-bins: building $cmd $K8S_VERSION (the first build takes minutes)" >&2
  go build -trimpath -ldflags "$LDF" -o "$OUT/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
  mv "$OUT/$cmd.tmp" "$OUT/$cmd"
done
if [ ! -x "$OUT/etcd" ]; then
  echo "k8s-bins: building etcd $ETCD_VERSION" >&2
  go build -trimpath -ldflags "-s -w -X go.etcd.io/etcd/api/v3/version.GitSHA=$ETCD_VERSION" -o "$OUT/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$OUT/etcd.tmp" "$OUT/etcd"
fi
