#!/usr/bin/env bash
# leftovers.sh: after down.sh, what the node left behind: processes (from
# its folder, in its cgroups), mounts under its folder, its netns, iptables
# chains in the host's namespace that were not there before up, its cgroups,
# and the host paths down.sh cleans. Prints "realnode leftovers: none" and
# exits 0, or prints each leftover and exits 1.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/realnode/env.sh
. "$HERE/env.sh"
left=()
while read -r p cmd; do
  [ "$p" = "$PPID" ] || left+=("process $p: ${cmd:0:120}")
done < <(pgrep -af -- "$RN/")
while read -r m; do left+=("mount $m"); done < <(awk -v r="$RN/" 'index($5, r) == 1 {print $5}' /proc/self/mountinfo)
[ -e "/run/netns/$NS" ] && left+=("netns $NS (/run/netns/$NS)")
if [ -f "$RN/host-chains.before" ]; then
  while read -r c; do left+=("iptables chain $c (host namespace)"); done < <(iptables-save 2>/dev/null | awk '/^:/{print $1}' | sort | comm -13 "$RN/host-chains.before" -)
fi
while read -r d; do
  left+=("cgroup $d")
  while read -r p; do
    left+=("process $p in cgroup $d: $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-120)")
  done < <(cat "$d/cgroup.procs" 2>/dev/null)
done < <(find /sys/fs/cgroup -type d -name "kubepact-$NS" 2>/dev/null)
if ! other_runtime; then
  for f in /run/containerd/s /run/containerd/fifo /var/lib/kubelet/device-plugins /var/lib/kubelet/pod-resources; do
    [ -e "$f" ] && left+=("file $f")
  done
fi
for f in /var/lib/cni/results/"$NS"-*; do [ -e "$f" ] && left+=("file $f"); done
for l in /var/log/containers/*.log; do [ -L "$l" ] && case $(readlink "$l") in "$RN"/*) left+=("file $l") ;; esac; done
[ -d "$RN/run" ] && left+=("folder $RN/run (state kept: KEEP_STATE=1?)")
if [ ${#left[@]} -eq 0 ]; then echo "realnode leftovers: none"; exit 0; fi
echo "realnode leftovers (${#left[@]}):"
printf '  %s\n' "${left[@]}"
exit 1
