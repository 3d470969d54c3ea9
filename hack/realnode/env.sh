# env.sh: the settings every hack/realnode script shares (sourced, not run).
#
#   REALNODE_NS   network namespace, and the name of the cluster (default kpn);
#                 two clusters with different names coexist
#   REALNODE_DIR  the cluster's folder (default <repo>/bin/realnode/<ns>):
#                 binaries, images, PKI, state and logs; nothing else is written
#                 outside it except what down.sh removes (see there)
#   K8S_BIN       kube-apiserver, etcd, ... kubelet (default bin/k8s/<version>,
#                 make envtest-assets node-assets)
# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source this
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NS=${REALNODE_NS:-kpn}
RN=$(realpath -m "${REALNODE_DIR:-$REPO/bin/realnode/$NS}") # resolved: mounts are listed by real path
K8S_BIN=${K8S_BIN:-$REPO/bin/k8s/$(cd "$REPO/hack/k8s-bins" && go list -m -f '{{.Version}}' k8s.io/kubernetes)}
NODE_NAME=$NS-node
NODE_IP=10.245.0.1          # on the netns' lo: reachable only inside it
POD_CIDR=10.244.0.0/24
POD_GW=10.244.0.1
SVC_CIDR=10.96.0.0/24
SVC_IP=10.96.0.1
BRIDGE=${NS}0
RUN=$RN/run ETC=$RN/etc
LOG=$RUN/log PKI=$ETC/pki
SOCK=$RUN/containerd/containerd.sock
IN=(nsenter "--net=/run/netns/$NS")
KC=("${IN[@]}" "$K8S_BIN/kubectl" --kubeconfig "$PKI/admin.kubeconfig" --cache-dir "$RUN/kube-cache")
# The node's cgroups: a child of this shell's memory cgroup (machines like
# the project's VMs nest each process tree in one) in every v1 hierarchy, or
# of the root on a cgroup v2 machine (runc also writes the hybrid unified
# hierarchy of a v1 machine). Recorded at up, read at down.
CGROUP_FILE=$RN/cgroup-root
cgroup_dirs() { # the directories of cgroup root $1 in every hierarchy
  local h
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo "/sys/fs/cgroup${1}"; return; fi
  for h in /sys/fs/cgroup/*/; do echo "${h%/}$1"; done
}
# other_runtime: another containerd or kubelet than ours runs here (then the
# host paths they share with ours are left alone).
other_runtime() {
  local p
  for p in $(pgrep -x containerd; pgrep -x kubelet; pgrep -x dockerd); do
    tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "$RN/" || return 0
  done
  return 1
}
