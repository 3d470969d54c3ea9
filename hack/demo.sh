#!/usr/bin/env bash
# make demo: serve kubepact's MCP surface on the example bundles, with no
# cluster. The examples are copied to a scratch workspace first, so the
# authoring tools an agent calls never change the repository.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
kubepact="${KUBEPACT:-$repo/bin/kubepact}"
port="${DEMO_PORT:-8585}"

work="$(mktemp -d "${TMPDIR:-/tmp}/kubepact-demo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp -R "$repo/examples/bundles/." "$work/"

echo "== The example bundles, checked:"
for b in "$work"/*/; do "$kubepact" check "$b" --no-cache || exit 1; done

cat <<MSG

== kubepact mcp is serving the authoring tools on http://127.0.0.1:$port/mcp
   workspace: $work (a scratch copy of examples/bundles)

   Connect a client, e.g.:
     claude mcp add --transport http kubepact-demo http://127.0.0.1:$port/mcp
   or point any MCP client at that URL. Ask it to run pacto_check on
   "payments", or to pacto_create a new service.

   Ctrl-C stops the server and removes the scratch workspace.

MSG
"$kubepact" mcp -t http --port "$port" --workspace "$work"
