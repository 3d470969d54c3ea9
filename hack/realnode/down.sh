#!/usr/bin/env bash
# down.sh: undo up.sh; a no-op when nothing is up. Ends every process up.sh
# started by the PID it recorded, every container through containerd, the
# shims of this containerd; unmounts what containerd and the kubelet mounted
# under the folder; removes the netns (its links and iptables rules go with
# it) and the node's cgroups. Paths containerd, libcni and the kubelet write
# outside their configured folders (/run/containerd/s and fifo,
# /var/lib/cni/results, /var/lib/kubelet/device-plugins, /var/log/containers
# links) are removed only when no other containerd or kubelet runs here.
# KEEP_STATE=1 keeps the state folder (logs, etcd data) for a post-mortem.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/realnode/env.sh
. "$HERE/env.sh"
[ -e "/run/netns/$NS" ] || [ -d "$RUN" ] || [ -f "$CGROUP_FILE" ] || { echo "realnode down: nothing is up ($NS)"; exit 0; }
ours() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline" | grep -qF -- "$2"; }
stop() { # NAME...: SIGTERM the recorded PIDs (when they still run what we started) together, SIGKILL after 10 s
  local n pid pids=()
  for n; do
    [ -f "$RUN/$n.pid" ] || continue
    pid=$(cat "$RUN/$n.pid")
    [ -n "$pid" ] && ours "$pid" "$RN/" && kill "$pid" 2>/dev/null && pids+=("$pid")
    rm -f "$RUN/$n.pid"
  done
  [ ${#pids[@]} -eq 0 ] && return 0
  for _ in $(seq 50); do
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && break; done || break
    sleep 0.2
  done
  kill -9 "${pids[@]}" 2>/dev/null
  return 0
}
# 1. The node agents first, so nothing restarts a container.
stop kubelet kube-proxy
# 2. Every container, through containerd; the shims exit once their tasks are gone.
if [ -S "$SOCK" ]; then
  tasks=$(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null)
  for t in $tasks; do ctr -a "$SOCK" -n k8s.io tasks kill -a -s SIGKILL "$t" >/dev/null 2>&1; done
  sleep 0.5
  for t in $tasks; do ctr -a "$SOCK" -n k8s.io tasks delete -f "$t" >/dev/null 2>&1; done
fi
# 3. The control plane and containerd.
stop scheduler kcm apiserver etcd containerd
# 4. Whatever still runs in our cgroups, our netns, or from our folder (shims), by PID.
for _ in 1 2 3; do
  pids=()
  CG=$(cat "$CGROUP_FILE" 2>/dev/null)
  if [ -n "$CG" ]; then
    for d in $(cgroup_dirs "$CG"); do
      [ -d "$d" ] && while read -r p; do pids+=("$p"); done < <(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null)
    done
  fi
  while read -r p; do [ "$p" = $$ ] || [ "$p" = "$PPID" ] || pids+=("$p"); done < <(ip netns pids "$NS" 2>/dev/null; pgrep -f -- "$RN/")
  [ ${#pids[@]} -eq 0 ] && break
  kill -9 "${pids[@]}" 2>/dev/null
  sleep 0.5
done
# 5. Unmount everything under the folder, deepest first.
awk -v r="$RN/" 'index($5, r) == 1 {print $5}' /proc/self/mountinfo | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "realnode down: could not unmount $m" >&2
done
# 6. The netns.
ip netns del "$NS" 2>/dev/null
# 7. The cgroups, deepest first.
if CG=$(cat "$CGROUP_FILE" 2>/dev/null) && [ -n "$CG" ]; then
  for d in $(cgroup_dirs "$CG"); do [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null; done
  rm -f "$CGROUP_FILE"
fi
# 8. Host paths shared with any other runtime: only when none runs.
if ! other_runtime; then
  rm -rf /var/lib/cni/results/cni-loopback-* /run/containerd/s /run/containerd/fifo
  rmdir /run/containerd 2>/dev/null
  rm -rf /var/lib/kubelet/device-plugins /var/lib/kubelet/plugins_registry /var/lib/kubelet/plugins /var/lib/kubelet/pod-resources
  rmdir /var/lib/kubelet 2>/dev/null
fi
# Ours by name, sandbox or target, whoever else runs.
rm -f /var/lib/cni/results/"$NS"-*
for sb in "$RUN"/containerd/state/io.containerd.grpc.v1.cri/sandboxes/*/; do
  [ -d "$sb" ] && rm -f /var/lib/cni/results/*-"$(basename "$sb")"-*
done
rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null
for l in /var/log/containers/*.log; do
  [ -L "$l" ] && case $(readlink "$l") in "$RUN"/*) rm -f "$l" ;; esac
done
rmdir /var/log/containers 2>/dev/null
[ "${KEEP_STATE:-}" = 1 ] || rm -rf "$RUN"
echo "realnode down: $NS removed"
