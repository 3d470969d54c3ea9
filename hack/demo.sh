#!/usr/bin/env bash
# make demo: kubepact's whole MCP surface on the example bundles, with no
# cluster, on one server:
#   - the generated tools of examples/bundles/catalog, calling a small
#     in-memory catalog service this script starts on 127.0.0.1:$SERVICE_PORT;
#   - the fleet tools over the example bundles and examples/fleet/targets.yaml;
#   - the catalog (pacto://catalog, pacto_catalog_revision) of orders and its
#     dependency closure, pushed with `kubepact push` to an in-memory OCI
#     registry this script starts on 127.0.0.1:$REGISTRY_PORT;
#   - the authoring and payload tools, on a scratch copy of the examples, so
#     an agent's pacto_create / pacto_edit never change the repository;
# and, on a second server, the gRPC tools of examples/grpc/inventory,
# calling a small Inventory gRPC service (hack/grpcdemo) this script starts
# on 127.0.0.1:$GRPC_PORT.
# The scratch copy's dependency references name that registry instead of
# registry.example.com, so every dependency resolves on loopback.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
bin="${BIN:-$repo/bin}"
port="${DEMO_PORT:-8585}"
service_port="${SERVICE_PORT:-8080}"
registry_port="${REGISTRY_PORT:-5005}"
grpc_mcp_port="${DEMO_GRPC_PORT:-8586}"
grpc_port="${GRPC_PORT:-9090}"
registry="127.0.0.1:$registry_port"

work="$(mktemp -d "${TMPDIR:-/tmp}/kubepact-demo.XXXXXX")"
pids=()
cleanup() {
  for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cp -R "$repo/examples/bundles/." "$work/"
for f in "$work"/*/pacto.yaml; do
  sed "s#oci://registry.example.com/kubepact-examples/#oci://$registry/kubepact-examples/#" "$f" >"$f.demo" && mv "$f.demo" "$f"
done

"$bin/demoregistry" -listen "$registry" &
pids+=($!)
"$bin/demoservice" -listen "127.0.0.1:$service_port" &
pids+=($!)
"$bin/grpcdemo" -listen "127.0.0.1:$grpc_port" -proto "$repo/examples/grpc/inventory/interfaces/inventory/v1/inventory.proto" &
pids+=($!)
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$registry_port") 2>/dev/null; then break; fi
  sleep 0.1
done

echo "== The example bundles, checked and pushed to the demo registry $registry:"
root=""
for b in "$work"/*/; do
  report="$("$bin/kubepact" check "$b" --no-cache)" || { echo "$report"; exit 1; }
  echo "$report"
  read -r name version _ <<<"${report%%$'\n'*}" # "catalog 1.4.0 (DIR): VALID …"
  ref="oci://$registry/kubepact-examples/$name:$version"
  printf '   %s  ' "$ref"
  "$bin/kubepact" push "$b" "$ref" --plain-http --no-cache
  if [ "$name" = orders ]; then root="$ref"; fi
done

cat <<MSG

== kubepact mcp on http://127.0.0.1:$port/mcp
   service tools  catalog's OpenAPI operations (reads only) -> http://127.0.0.1:$service_port
   fleet tools    catalog, orders, payments + examples/fleet/targets.yaml
   catalog        $root and its dependency closure (pacto://catalog, pacto_catalog_revision)
   authoring      workspace $work (a scratch copy of examples/bundles)

== kubepact mcp on http://127.0.0.1:$grpc_mcp_port/mcp
   gRPC tools     examples/grpc/inventory's RPCs (reads only) -> 127.0.0.1:$grpc_port (h2c)

   Connect a client, e.g.
     claude mcp add --transport http kubepact-demo http://127.0.0.1:$port/mcp
   then ask: "list the catalog's products", "which services need attention?",
   "what would break if payments dropped refunds?", "check the payments bundle",
   "which revisions does orders depend on, by digest?"; and, with
     claude mcp add --transport http kubepact-grpc http://127.0.0.1:$grpc_mcp_port/mcp
   "show me the inventory item LMP-3".

   Ctrl-C stops the servers and the registry and removes the scratch workspace.

MSG
"$bin/kubepact" mcp "$repo/examples/grpc/inventory" --grpc-target "127.0.0.1:$grpc_port" --families capability \
  -t http --port "$grpc_mcp_port" --no-cache &
pids+=($!)
"$bin/kubepact" mcp "$repo/examples/bundles/catalog" --base-url "http://127.0.0.1:$service_port" \
  --fleet --local "$work" --target-state "$repo/examples/fleet/targets.yaml" \
  --root "$root" --plain-http \
  -t http --port "$port" --workspace "$work" --no-cache
