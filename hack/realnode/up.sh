#!/usr/bin/env bash
# up.sh: a real one-node Kubernetes cluster in a network namespace of its
# own, with no registry and no Docker: etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler (bin/k8s, make envtest-assets
# node-assets), kubelet and kube-proxy (iptables), Debian's containerd, runc
# and bridge CNI. Images are made locally (nodeimg) and imported with ctr.
#
#   hack/realnode/up.sh        # then: bin/realnode/kpn/kc get nodes
#   hack/realnode/down.sh      # removes all of it
#
# Idempotent: when the cluster is up it says so and exits 0; a half-made one
# is taken down first. The namespace has only lo (127.0.0.1 and the node IP)
# and the Pod bridge: no uplink, so everything the cluster reaches is inside
# it. Settings: hack/realnode/env.sh. Each fix the machine needed is
# commented where it is made (the research: docs in the issue 21 note).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/realnode/env.sh
. "$HERE/env.sh"
t0=$(date +%s%N)
say() { local d=$((($(date +%s%N) - t0) / 100000000)); echo "realnode up [$((d / 10)).$((d % 10))s] $*"; }
fail() { echo "realnode up: $*" >&2; exit 1; }
start() { # NAME CMD...: CMD in the netns, in a session of its own, logs in $LOG/NAME.log, PID in $RUN/NAME.pid
  local n=$1; shift
  # shellcheck disable=SC2016 # $$ and $@ are the inner shell's
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$RUN/$n.pid" "${IN[@]}" "$@" </dev/null >"$LOG/$n.log" 2>&1 &
  for _ in $(seq 50); do [ -s "$RUN/$n.pid" ] && return 0; sleep 0.1; done
  fail "$n did not start (log: $LOG/$n.log)"
}
waitfor() { # WHAT SECONDS CMD...
  local what=$1 secs=$2; shift 2
  for _ in $(seq "$((secs * 5))"); do "$@" >/dev/null 2>&1 && { say "$what"; return 0; }; sleep 0.2; done
  fail "timed out after ${secs}s waiting for $what (logs: $LOG)"
}
ready() { [ "$("${KC[@]}" get node "$NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]; }

"$HERE/prereqs.sh" || exit 2
trap '[ $? = 0 ] || echo "realnode up: failed; logs in $LOG; hack/realnode/down.sh removes what was made" >&2' EXIT
if [ -e "/run/netns/$NS" ]; then
  if [ -f "$RUN/up" ] && ready; then say "already up: $RN/kc get nodes"; exit 0; fi
  say "a half-made cluster $NS is here: taking it down first"
  "$HERE/down.sh"
fi
mkdir -p "$RN/bin" "$RN/images" "$LOG" "$ETC/cni/net.d" "$RUN/kubelet" "$RUN/etcd" "$RUN/apiserver"
# What the host's iptables held before (the leftover check compares with it).
iptables-save 2>/dev/null | awk '/^:/{print $1}' | sort >"$RN/host-chains.before" || true

# 1. Images' binaries, built outside the netns (the module proxy is not reachable inside).
if [ ! -x "$RN/bin/nodeimg" ] || [ ! -x "$RN/bin/demoservice" ] || [ ! -x "$RN/bin/grpcdemo" ]; then
  (cd "$REPO" && CGO_ENABLED=0 go build -trimpath -o "$RN/bin/nodeimg" ./hack/realnode/nodeimg &&
    CGO_ENABLED=0 go build -trimpath -o "$RN/bin/demoservice" ./hack/demoservice &&
    CGO_ENABLED=0 go build -trimpath -o "$RN/bin/grpcdemo" ./hack/grpcdemo)
  say "built nodeimg, demoservice and grpcdemo"
fi

# 2. The namespace: lo with the node IP (the kernel may lack dummy links), the
# Pod bridge made early so the service CIDR has a route before the first Pod
# (no default route here: a ClusterIP connect would fail before kube-proxy's DNAT).
ip netns add "$NS"
"${IN[@]}" sh -ec "
  ip link set lo up
  ip addr add $NODE_IP/32 dev lo
  ip link add $BRIDGE type bridge
  ip addr add $POD_GW/${POD_CIDR#*/} dev $BRIDGE
  ip link set $BRIDGE up
  ip route add $SVC_CIDR dev $BRIDGE
  sysctl -qw net.ipv4.ip_forward=1"
say "netns $NS"

# 3. PKI, configuration, cgroups.
NODE_NAME=$NODE_NAME NODE_IP=$NODE_IP SVC_IP=$SVC_IP "$HERE/pki.sh" "$PKI"
cat >"$ETC/containerd.toml" <<EOT
version = 2
root = "$RUN/containerd/root"
state = "$RUN/containerd/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$RUN/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:local"
  # Without CAP_SYS_RESOURCE (the project's VMs) runc cannot set the
  # sandbox's oom_score_adj of -998: every sandbox would fail with
  # "failed to update /proc/self/oom_score_adj: Permission denied".
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$ETC/cni/net.d"
EOT
cat >"$ETC/cni/net.d/10-bridge.conflist" <<EOT
{"cniVersion": "0.4.0", "name": "$NS", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GW"}]],
            "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$RUN/cni-ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOT
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then CG=/kubepact-$NS
else CG=$(awk -F: '$2=="memory"{print $3}' /proc/self/cgroup | sed 's,/$,,')/kubepact-$NS; fi
echo "$CG" >"$CGROUP_FILE"
for d in $(cgroup_dirs "$CG"); do mkdir -p "$d"; done
if [ -d /sys/fs/cgroup/cpuset ]; then # a v1 cpuset child is unusable until cpus and mems are set
  p=/sys/fs/cgroup/cpuset
  for part in $(echo "$CG" | tr / ' '); do
    p=$p/$part
    [ -n "$(cat "$p/cpuset.cpus")" ] || cat /sys/fs/cgroup/cpuset/cpuset.cpus >"$p/cpuset.cpus"
    [ -n "$(cat "$p/cpuset.mems")" ] || cat /sys/fs/cgroup/cpuset/cpuset.mems >"$p/cpuset.mems"
  done
fi
cat >"$ETC/kubelet.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs          # containerd 1.6 does not report its driver: the kubelet uses this one
failCgroupV1: false             # the project's VMs mount cgroup v1 hierarchies
cgroupRoot: $CG
failSwapOn: false
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $PKI/ca.crt}}
authorization: {mode: Webhook}
clusterDomain: cluster.local
resolvConf: $ETC/resolv.conf
podLogsDir: $RUN/pod-logs
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100  # an image cannot be pulled back: never collect one
imageGCLowThresholdPercent: 99
serializeImagePulls: false
nodeStatusUpdateFrequency: 5s
EOT
echo "nameserver 127.0.0.1" >"$ETC/resolv.conf" # no resolver: nothing outside the netns is reachable

# 4. containerd and the images.
start containerd containerd --config "$ETC/containerd.toml"
waitfor "containerd" 30 ctr -a "$SOCK" version
mk() { [ -f "$RN/images/$1.tar" ] || "$RN/bin/nodeimg" image -name "localhost/$1:local" -out "$RN/images/$1.tar" "${@:2}" >/dev/null; }
mk pause -file "$RN/bin/nodeimg:/nodeimg" -entrypoint /nodeimg,pause
mk registry -file "$RN/bin/nodeimg:/nodeimg" -entrypoint /nodeimg,registry -user 65532:65532
mk demoservice -file "$RN/bin/demoservice:/demoservice" -entrypoint /demoservice -user 65532:65532
proto="$REPO/examples/grpc/inventory/interfaces/inventory/v1"
mk grpcdemo -file "$RN/bin/grpcdemo:/grpcdemo" -file "$proto/inventory.proto:/proto/inventory.proto" \
  -file "$proto/common.proto:/proto/common.proto" -entrypoint /grpcdemo -user 65532:65532
links=()
for a in sh cat echo ls sleep wget nc httpd ps env hostname ip grep sed date id mkdir timeout kill; do links+=(-link "/bin/$a:busybox"); done
mk busybox -file /bin/busybox:/bin/busybox "${links[@]}" -entrypoint /bin/sh
for t in "$RN"/images/*.tar; do
  case $t in # an OCI layout tar (make image) is named by its ref.name annotation
    *-oci.tar) ctr -a "$SOCK" -n k8s.io images import --base-name "localhost/$(basename "$t" -oci.tar)" "$t" ;;
    *) ctr -a "$SOCK" -n k8s.io images import "$t" ;;
  esac >/dev/null
done
say "images: $(ctr -a "$SOCK" -n k8s.io images ls -q | grep '^localhost/' | tr '\n' ' ')"

# 5. The control plane.
B=$K8S_BIN
start etcd "$B/etcd" --data-dir "$RUN/etcd" --unsafe-no-fsync \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster default=http://127.0.0.1:2380
# --kubelet-preferred-address-types=InternalIP: there is no DNS for the node
# name. --enable-aggregator-routing: webhooks are dialled at their endpoint IP.
start apiserver "$B/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
  --bind-address=0.0.0.0 --secure-port=6443 --advertise-address="$NODE_IP" \
  --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" --client-ca-file="$PKI/ca.crt" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --service-cluster-ip-range="$SVC_CIDR" --authorization-mode=Node,RBAC --allow-privileged=true \
  --kubelet-client-certificate="$PKI/admin.crt" --kubelet-client-key="$PKI/admin.key" \
  --kubelet-preferred-address-types=InternalIP --enable-aggregator-routing=true --cert-dir="$RUN/apiserver"
waitfor "kube-apiserver /readyz" 120 "${KC[@]}" get --raw /readyz
start kcm "$B/kube-controller-manager" --kubeconfig="$PKI/admin.kubeconfig" --leader-elect=false --secure-port=0 \
  --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" --use-service-account-credentials=false \
  --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" --service-cluster-ip-range="$SVC_CIDR"
start scheduler "$B/kube-scheduler" --kubeconfig="$PKI/admin.kubeconfig" --leader-elect=false --secure-port=0

# 6. The node.
start kubelet "$B/kubelet" --config="$ETC/kubelet.yaml" --kubeconfig="$PKI/kubelet.kubeconfig" \
  --root-dir="$RUN/kubelet" --node-ip="$NODE_IP" --hostname-override="$NODE_NAME"
start kube-proxy "$B/kube-proxy" --kubeconfig="$PKI/admin.kubeconfig" --proxy-mode=iptables \
  --cluster-cidr="$POD_CIDR" --hostname-override="$NODE_NAME" --conntrack-max-per-core=0 \
  --metrics-bind-address=127.0.0.1:10249 --healthz-bind-address=127.0.0.1:10256 --nodeport-addresses=primary
waitfor "node $NODE_NAME Ready" 120 ready
waitfor "ServiceAccount default/default" 60 "${KC[@]}" -n default get sa default

# kubectl in the netns, for people and scripts.
cat >"$RN/kc" <<EOT
#!/bin/sh
exec ${IN[*]} "$K8S_BIN/kubectl" --kubeconfig "$PKI/admin.kubeconfig" --cache-dir "$RUN/kube-cache" "\$@"
EOT
chmod +x "$RN/kc"
touch "$RUN/up"
say "up: $RN/kc get nodes; or KUBECONFIG=$PKI/admin.kubeconfig ${IN[*]} CMD"
