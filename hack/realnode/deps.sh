#!/usr/bin/env bash
# deps.sh: install the Debian packages the real-node e2e back end runs
# (containerd, runc, the CNI plugins, iptables, conntrack, a static busybox).
# Does nothing when they are all present. Exits non-zero with one line saying
# what is missing when it cannot install them (not root, no apt-get, apt-get
# failed); .ci/run then falls back to envtest.
set -euo pipefail
PKGS=(containerd runc containernetworking-plugins iptables conntrack busybox-static)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
fix="apt-get install -y ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
  echo "realnode deps: missing ${missing[*]} and not root: run as root: $fix" >&2; exit 2
fi
command -v apt-get >/dev/null || { echo "realnode deps: missing ${missing[*]} and no apt-get here (a Debian/Ubuntu machine is needed)" >&2; exit 2; }
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Another apt run (a second engineer, unattended upgrades) may hold the lock: wait for it.
if ! { apt-get -o DPkg::Lock::Timeout=300 update && apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  echo "realnode deps: $fix failed: $(grep -E '^(E|Err):' "$log" | head -1)" >&2; exit 2
fi
echo "realnode deps: installed ${missing[*]}" >&2
