#!/usr/bin/env bash
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-v1.37.2}
STAGING_VERSION=v0.${K8S_VERSION#v1.}
MODULE=${MODULE:-github.com/kubepact/kubepact/hack/k8s-bins}
gomod=$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/^\s*"GoMod": "\(.*\)",$/\1/p')
{
  echo "module ${MODULE}"
  echo
  grep -E '^go [0-9.]+$' "$gomod"
  echo
  echo "require k8s.io/kubernetes ${K8S_VERSION}"
  echo
  echo "replace ("
  grep -E '^\s*k8s\.io/[a-z0-9-]+ => \./staging/' "$gomod" | awk -v v="$STAGING_VERSION" '{printf "\t%s => %s %s\n", $1, $1, v}'
  echo ")"
} > go.mod
