#!/usr/bin/env bash
# prereqs.sh: can a real node run here? Silent with exit 0 when it can;
# otherwise ONE line on stderr (what is missing, how to get it) and exit 2.
# Checks root, the Debian packages (hack/realnode/deps.sh installs them), the
# node binaries (make envtest-assets node-assets; not with the argument
# "system": the machine only), and the kernel features
# the node uses: network namespaces, bridge and veth links, iptables in a
# namespace, overlayfs, cgroups.
set -uo pipefail
# shellcheck source=hack/realnode/env.sh
. "$(dirname "$0")/env.sh"
no() { echo "realnode: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || no "not root: the node needs root (network namespaces, mounts, cgroups); run as root"
missing=()
for c in containerd:containerd ctr:containerd runc:runc iptables:iptables conntrack:conntrack \
  /usr/lib/cni/bridge:containernetworking-plugins /usr/lib/cni/host-local:containernetworking-plugins \
  /usr/lib/cni/loopback:containernetworking-plugins /bin/busybox:busybox-static; do
  command -v "${c%%:*}" >/dev/null 2>&1 || missing+=("${c#*:}")
done
[ ${#missing[@]} -eq 0 ] || no "missing Debian packages: $(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')(install: hack/realnode/deps.sh, or make node-deps)"
for c in nsenter ip openssl; do command -v "$c" >/dev/null || no "missing $c (apt-get install -y util-linux iproute2 openssl)"; done
[ "${1:-}" = system ] || for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
  [ -x "$K8S_BIN/$b" ] || no "missing $K8S_BIN/$b (build: make envtest-assets node-assets)"
done
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || no "the kernel has no overlayfs (containerd's snapshotter): CONFIG_OVERLAY_FS"
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || no "no memory cgroup mounted at /sys/fs/cgroup (the kubelet needs cgroups)"
probe=$NS-probe$$
ip netns add "$probe" 2>/dev/null || no "cannot make a network namespace (ip netns add failed): the kernel needs CONFIG_NET_NS"
trap 'ip netns del "$probe" 2>/dev/null' EXIT
ip netns exec "$probe" ip link add p0 type bridge 2>/dev/null || no "cannot make a bridge link: the kernel needs CONFIG_BRIDGE (modprobe bridge)"
ip netns exec "$probe" ip link add p1 type veth peer name p2 2>/dev/null || no "cannot make a veth pair: the kernel needs CONFIG_VETH (modprobe veth)"
ip netns exec "$probe" iptables -t nat -L >/dev/null 2>&1 || no "iptables cannot use its nat table in a namespace: the kernel needs netfilter NAT (nf_tables or iptable_nat)"
exit 0
