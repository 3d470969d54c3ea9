#!/usr/bin/env bash
# e2e.sh: the end-to-end suite (test/e2e) on a real node: `make test-e2e`
# where hack/realnode/prereqs.sh passes. hack/e2e-kind.sh with kind and
# Docker replaced: up.sh's node instead of `kind create cluster`, `make
# image` imported with ctr instead of `kind load`, an in-memory registry
# image (nodeimg) instead of registry:2. The test binary is compiled here
# (the module proxy is not reachable inside the netns) and run inside the
# netns with KUBEPACT_E2E=cluster; then the node is taken down and
# leftovers.sh must find nothing. The node is brought up and down with the
# README's `make node-up` and `make node-down`.
#
# Environment: HELM (helm binary, required), KUBEPACT_CLIENTS_DIR (the
# TypeScript client harness), E2E_FLAGS (go test flags, as -test.* flags
# are derived from them), KEEP_CLUSTER=1 keeps the node up afterwards,
# REALNODE_NS / REALNODE_DIR (hack/realnode/env.sh). The suite learns where
# it runs from KUBEPACT_E2E_NODE (the netns) and KUBEPACT_E2E_NODE_DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/realnode/env.sh
. "$HERE/env.sh"
HELM=${HELM:?HELM must name a helm v3 binary (make test-e2e builds one)}
TAG=v0.0.0-e2e
REGISTRY_NS=kubepact-e2e-registry
REGISTRY_IP=10.96.0.50 # fixed ClusterIP: Pods reach the registry without cluster DNS
E2E_FLAGS=${E2E_FLAGS:--count=1 -timeout 20m -v}
t0=$(date +%s)
say() { echo "== realnode e2e [$(($(date +%s) - t0))s] $*"; }

"$HERE/prereqs.sh" system || exit 2
BUILD=$RN/build
mkdir -p "$BUILD" "$RN/images"
say "images: make image (kubepact $TAG), the e2e test binary"
make -C "$REPO" --no-print-directory image VERSION="$TAG" LOCALBIN="$BUILD" >"$RN/make-image.log" 2>&1 ||
  { tail -20 "$RN/make-image.log" >&2; exit 1; }
tar -C "$BUILD/image" -cf "$RN/images/kubepact-oci.tar.tmp" . && mv "$RN/images/kubepact-oci.tar.tmp" "$RN/images/kubepact-oci.tar"
(cd "$REPO" && go test -c -tags e2e -o "$BUILD/e2e.test" ./test/e2e)
say "built"

pf="" sampler=""
peak=0
finish() {
  rc=$?
  [ -n "$pf" ] && kill "$pf" 2>/dev/null
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null
  [ -f "$RN/peak-rss-kib" ] && say "peak RSS of the node's processes: $(($(cat "$RN/peak-rss-kib") / 1024)) MiB"
  if [ "$rc" != 0 ] && [ -d "$LOG" ]; then # what a post-mortem needs, kept outside the state down removes
    "${KC[@]}" get pods -A -o wide 2>&1 | head -40 || true
    "${KC[@]}" get events -A --sort-by=.lastTimestamp 2>&1 | tail -30 || true
    rm -rf "$RN/failed-logs" && cp -r "$LOG" "$RN/failed-logs" && say "the node's logs: $RN/failed-logs"
  fi
  if [ "${KEEP_CLUSTER:-}" = 1 ]; then say "kept: $RN/kc"; exit "$rc"; fi
  s=$(date +%s)
  # README's `make node-down`: down.sh, then leftovers.sh must find nothing.
  make -C "$REPO" --no-print-directory node-down || rc=1
  say "down and checked in $(($(date +%s) - s))s"
  exit "$rc"
}
trap finish EXIT
s=$(date +%s)
make -C "$REPO" --no-print-directory node-up # README's `make node-up`
say "node up in $(($(date +%s) - s))s"
ctr -a "$SOCK" -n k8s.io images import --base-name localhost/kubepact "$RN/images/kubepact-oci.tar" >/dev/null
# The node's memory: the sum of the RSS of its processes (ours by folder, and
# every container in its cgroups), sampled every 2 s; the peak is kept.
(
  while [ -d "$RUN" ]; do
    sum=0
    for p in $({ pgrep -f -- "$RN/"; CG=$(cat "$CGROUP_FILE" 2>/dev/null) && [ -n "$CG" ] && cat "/sys/fs/cgroup/memory$CG"/cgroup.procs; find "/sys/fs/cgroup/memory$CG" -mindepth 1 -name cgroup.procs -exec cat {} +; } 2>/dev/null | sort -u); do
      r=$(awk '/^VmRSS:/{print $2}' "/proc/$p/status" 2>/dev/null) && sum=$((sum + ${r:-0}))
    done
    [ "$sum" -gt "$peak" ] && { peak=$sum; echo "$peak" >"$RN/peak-rss-kib"; }
    sleep 2
  done
) &
sampler=$!

say "registry (in-memory, a Pod at $REGISTRY_IP:5000)"
"${KC[@]}" apply -f - >/dev/null <<EOT
apiVersion: v1
kind: Namespace
metadata: {name: $REGISTRY_NS}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: registry, namespace: $REGISTRY_NS}
spec:
  selector: {matchLabels: {app: registry}}
  template:
    metadata: {labels: {app: registry}}
    spec:
      containers:
        - name: registry
          image: localhost/registry:local
          imagePullPolicy: Never
          ports: [{name: http, containerPort: 5000}]
          readinessProbe: {httpGet: {path: /v2/, port: http}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: registry, namespace: $REGISTRY_NS}
spec:
  clusterIP: $REGISTRY_IP
  selector: {app: registry}
  ports: [{name: http, port: 5000, targetPort: http}]
EOT
"${KC[@]}" -n "$REGISTRY_NS" rollout status deploy/registry --timeout=180s >/dev/null
"${KC[@]}" -n "$REGISTRY_NS" port-forward --address 127.0.0.1 svc/registry 5001:5000 >"$LOG/registry-pf.log" 2>&1 &
pf=$!
for _ in $(seq 100); do "${IN[@]}" curl -fsS http://127.0.0.1:5001/v2/ >/dev/null 2>&1 && break; sleep 0.2; done

# The registry is at a private address: kubepact reaches one only when it is named.
say "helm install kubepact (localhost/kubepact:$TAG)"
export KUBECONFIG=$PKI/admin.kubeconfig KUBECACHEDIR=$RUN/kube-cache
"${IN[@]}" "$HELM" install kubepact "$REPO/charts/kubepact" --namespace kubepact-system --create-namespace \
  --set image.repository=localhost/kubepact --set image.tag="$TAG" --set image.digest= --set image.pullPolicy=Never \
  --set registry.plainHTTP=true --set "registry.allowedRegistries={*,$REGISTRY_IP:5000}" \
  --set 'networkPolicy.registries.ports={443,5000}' --wait --timeout 5m >/dev/null

say "go test ./test/e2e (KUBEPACT_E2E=cluster, in netns $NS)"
# go test flags as the test binary takes them (-count=1 -> -test.count=1).
flags=()
for f in $E2E_FLAGS; do case $f in -*) flags+=("-test.${f#-}") ;; *) flags+=("$f") ;; esac; done
s=$(date +%s)
cd "$REPO/test/e2e"
"${IN[@]}" env KUBEPACT_E2E=cluster KUBEPACT_E2E_NODE="$NS" KUBEPACT_E2E_NODE_DIR="$RN" \
  KUBEPACT_HELM="$HELM" KUBECTL="$K8S_BIN/kubectl" KUBEPACT_BIN="$BUILD/kubepact-linux-amd64" \
  KUBEPACT_E2E_REGISTRY=127.0.0.1:5001 KUBEPACT_E2E_REGISTRY_CLUSTER="$REGISTRY_IP:5000" \
  KUBEPACT_E2E_DEMO_IMAGE=localhost/demoservice:local \
  KUBEPACT_E2E_GRPC_IMAGE=localhost/grpcdemo:local \
  "$BUILD/e2e.test" "${flags[@]}"
say "suite in $(($(date +%s) - s))s"
