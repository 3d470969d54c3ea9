#!/usr/bin/env bash
# The end-to-end suite (test/e2e) on a kind cluster: `make test-e2e-kind`.
#
# Needs a Docker engine, kubectl and Go; kind is built from the Go module
# proxy into $LOCALBIN. It creates a cluster, builds the kubepact image
# (make docker-build) and a demo-service image, loads both into kind, runs an
# OCI registry (registry:2) in the cluster, installs the chart with helm,
# waits for it, and runs the same Go steps as `make test-e2e` with
# KUBEPACT_E2E=cluster: every endpoint is reached with kubectl port-forward.
# The project's own build machines have no Docker: this path runs on GitHub
# Actions (.github/workflows/e2e.yaml) and on developers' machines.
#
# Environment: HELM (helm binary, required), IMG (image tag to build, default
# kubepact:e2e), LOCALBIN (default ./bin), KIND_CLUSTER (default
# kubepact-e2e), KEEP_CLUSTER=1 keeps the cluster afterwards, HELM_EXTRA_ARGS
# (more `helm install` flags), E2E_FLAGS (go test flags).
set -euo pipefail
cd "$(dirname "$0")/.."

KIND_VERSION=v0.33.0
LOCALBIN=${LOCALBIN:-$PWD/bin}
KIND=$LOCALBIN/kind-$KIND_VERSION
KIND_CLUSTER=${KIND_CLUSTER:-kubepact-e2e}
IMG=${IMG:-kubepact:e2e}
DEMO_IMG=kubepact-demoservice:e2e
HELM=${HELM:?HELM must name a helm v3 binary (make test-e2e-kind builds one)}
KUBECTL=${KUBECTL:-kubectl}
REGISTRY_NS=kubepact-e2e-registry
REGISTRY_LOCAL_PORT=${REGISTRY_LOCAL_PORT:-5001}
E2E_FLAGS=${E2E_FLAGS:--count=1 -timeout 20m -v}

need() { command -v "$1" >/dev/null || { echo "e2e-kind: $1 not found: $2" >&2; exit 2; }; }
need docker "this path needs a Docker engine (use make test-e2e where there is none)"
need "$KUBECTL" "install kubectl (or set KUBECTL)"
need go "install Go"
docker info >/dev/null 2>&1 || { echo "e2e-kind: docker is installed but no engine answers (docker info failed)" >&2; exit 2; }

if [ ! -x "$KIND" ]; then
  echo "== building kind $KIND_VERSION into $KIND"
  mkdir -p "$LOCALBIN"
  GOBIN=$LOCALBIN go install "sigs.k8s.io/kind@$KIND_VERSION"
  mv "$LOCALBIN/kind" "$KIND"
fi

work=$(mktemp -d)
pf_pid=""
cleanup() {
  if [ -n "$pf_pid" ]; then kill "$pf_pid" 2>/dev/null || true; fi
  rm -rf "$work"
  if [ "${KEEP_CLUSTER:-}" != 1 ]; then "$KIND" delete cluster --name "$KIND_CLUSTER" || true; fi
}
trap cleanup EXIT

echo "== kind cluster $KIND_CLUSTER"
"$KIND" get clusters 2>/dev/null | grep -qx "$KIND_CLUSTER" || "$KIND" create cluster --name "$KIND_CLUSTER" --wait 180s
export KUBECONFIG=$work/kubeconfig
"$KIND" get kubeconfig --name "$KIND_CLUSTER" >"$KUBECONFIG"

echo "== images: $IMG (make docker-build) and $DEMO_IMG"
make docker-build IMG="$IMG"
mkdir -p "$work/demo"
CGO_ENABLED=0 go build -trimpath -o "$work/demo/demoservice" ./hack/demoservice
cat >"$work/demo/Dockerfile" <<'EOF'
FROM scratch
COPY demoservice /demoservice
USER 65532:65532
ENTRYPOINT ["/demoservice"]
EOF
docker build -t "$DEMO_IMG" "$work/demo"
"$KIND" load docker-image "$IMG" "$DEMO_IMG" --name "$KIND_CLUSTER"

echo "== registry (registry:2 in namespace $REGISTRY_NS)"
"$KUBECTL" apply -f - <<EOF
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
          image: registry:2
          ports: [{name: http, containerPort: 5000}]
          readinessProbe: {httpGet: {path: /v2/, port: http}}
---
apiVersion: v1
kind: Service
metadata: {name: registry, namespace: $REGISTRY_NS}
spec:
  selector: {app: registry}
  ports: [{name: http, port: 5000, targetPort: http}]
EOF
"$KUBECTL" -n "$REGISTRY_NS" rollout status deploy/registry --timeout=180s
"$KUBECTL" -n "$REGISTRY_NS" port-forward --address 127.0.0.1 svc/registry "$REGISTRY_LOCAL_PORT:5000" >"$work/registry-pf.log" 2>&1 &
pf_pid=$!
for _ in $(seq 60); do
  curl -fsS "http://127.0.0.1:$REGISTRY_LOCAL_PORT/v2/" >/dev/null 2>&1 && break
  sleep 1
done

echo "== helm install kubepact ($IMG)"
# The registry speaks plain HTTP on port 5000 (the NetworkPolicy's egress
# must allow it) at a private address, which kubepact reaches only when it
# is named in registry.allowedRegistries; the image was loaded, not pulled.
# shellcheck disable=SC2086 # HELM_EXTRA_ARGS is a list of flags
"$HELM" install kubepact charts/kubepact --namespace kubepact-system --create-namespace \
  --set image.repository="${IMG%:*}" --set image.tag="${IMG##*:}" --set image.digest= --set image.pullPolicy=Never \
  --set registry.plainHTTP=true --set "registry.allowedRegistries={*,registry.$REGISTRY_NS.svc.cluster.local:5000}" \
  --set 'networkPolicy.registries.ports={443,5000}' \
  ${HELM_EXTRA_ARGS:-} --wait --timeout 5m

echo "== go test ./test/e2e (KUBEPACT_E2E=cluster)"
# shellcheck disable=SC2086 # E2E_FLAGS is a list of flags
KUBEPACT_E2E=cluster KUBEPACT_HELM="$HELM" KUBECTL="$KUBECTL" \
  KUBEPACT_E2E_REGISTRY="127.0.0.1:$REGISTRY_LOCAL_PORT" \
  KUBEPACT_E2E_REGISTRY_CLUSTER="registry.$REGISTRY_NS.svc.cluster.local:5000" \
  KUBEPACT_E2E_DEMO_IMAGE="$DEMO_IMG" \
  go test -tags e2e $E2E_FLAGS ./test/e2e/...
