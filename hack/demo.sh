#!/usr/bin/env bash
# make demo: kubepact's whole MCP surface on the example bundles, with no
# cluster, on one server:
#   - the generated tools of examples/bundles/catalog, calling a small
#     in-memory catalog service this script starts on 127.0.0.1:$SERVICE_PORT;
#   - the fleet tools over the example bundles and examples/fleet/targets.yaml;
#   - the authoring tools, on a scratch copy of the examples, so an agent's
#     pacto_create / pacto_edit never change the repository.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
bin="${BIN:-$repo/bin}"
port="${DEMO_PORT:-8585}"
service_port="${SERVICE_PORT:-8080}"

work="$(mktemp -d "${TMPDIR:-/tmp}/kubepact-demo.XXXXXX")"
service_pid=""
cleanup() {
  if [ -n "$service_pid" ]; then kill "$service_pid" 2>/dev/null || true; wait "$service_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cp -R "$repo/examples/bundles/." "$work/"

echo "== The example bundles, checked:"
for b in "$work"/*/; do "$bin/kubepact" check "$b" --no-cache || exit 1; done

"$bin/demoservice" -listen "127.0.0.1:$service_port" &
service_pid=$!

cat <<MSG

== kubepact mcp on http://127.0.0.1:$port/mcp
   service tools  catalog's OpenAPI operations (reads only) -> http://127.0.0.1:$service_port
   fleet tools    catalog, orders, payments + examples/fleet/targets.yaml
   authoring      workspace $work (a scratch copy of examples/bundles)

   Connect a client, e.g.
     claude mcp add --transport http kubepact-demo http://127.0.0.1:$port/mcp
   then ask: "list the catalog's products", "which services need attention?",
   "what would break if payments dropped refunds?", "check the payments bundle".

   Ctrl-C stops both servers and removes the scratch workspace.

MSG
"$bin/kubepact" mcp "$repo/examples/bundles/catalog" --base-url "http://127.0.0.1:$service_port" \
  --fleet --local "$work" --target-state "$repo/examples/fleet/targets.yaml" \
  -t http --port "$port" --workspace "$work" --no-cache
