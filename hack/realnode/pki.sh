#!/usr/bin/env bash
# pki.sh DIR: the node's PKI in DIR (kept while DIR/ca.crt is valid a day more): one CA,
# the apiserver's serving cert, the admin (system:masters) and kubelet
# (system:node) client certs, the kubelet's serving cert, the
# ServiceAccount signing keys, and a kubeconfig for admin and the kubelet.
set -euo pipefail
D=${1:?pki.sh DIR}
NODE=${NODE_NAME:?} NODE_IP=${NODE_IP:?} SVC_IP=${SVC_IP:?}
mkdir -p "$D"
cd "$D"
kubeconfig() { # NAME CERT
  cat >"$1.kubeconfig" <<EOT
apiVersion: v1
kind: Config
clusters: [{name: $NODE, cluster: {server: "https://$NODE_IP:6443", certificate-authority: $D/ca.crt}}]
users: [{name: $1, user: {client-certificate: $D/$2.crt, client-key: $D/$2.key}}]
contexts: [{name: $NODE, context: {cluster: $NODE, user: $1}}]
current-context: $NODE
EOT
}
# The kubeconfigs name DIR by its path, so they are written on every run: a
# kept PKI in a moved or re-linked checkout still has kubeconfigs that find it.
kubeconfigs() { kubeconfig admin admin; kubeconfig kubelet kubelet; }
# A kept PKI must stay valid for the run (its certs last 30 days).
if [ -f ca.crt ] && openssl x509 -checkend 86400 -noout -in ca.crt >/dev/null 2>&1 \
  && openssl x509 -checkend 86400 -noout -in apiserver.crt >/dev/null 2>&1; then
  kubeconfigs
  exit 0
fi
q() { "$@" 2>/dev/null || { echo "pki.sh: $1 $2 failed" >&2; exit 1; }; }
q openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj "/CN=$NODE-ca"
cert() { # NAME CN O [SAN]
  local n=$1 cn=$2 o=$3 san=${4:-}
  q openssl req -newkey rsa:2048 -nodes -keyout "$n.key" -out "$n.csr" -subj "/CN=$cn${o:+/O=$o}"
  if [ -n "$san" ]; then printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" >"$n.ext"
  else printf 'extendedKeyUsage=clientAuth\n' >"$n.ext"; fi
  q openssl x509 -req -in "$n.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$n.crt" -days 30 -extfile "$n.ext"
  rm -f "$n.csr" "$n.ext"
}
cert apiserver kube-apiserver "" "IP:127.0.0.1,IP:$NODE_IP,IP:$SVC_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert admin admin system:masters
cert kubelet "system:node:$NODE" system:nodes
cert kubelet-serving "system:node:$NODE" system:nodes "IP:$NODE_IP,IP:127.0.0.1,DNS:$NODE"
q openssl genrsa -out sa.key 2048
q openssl rsa -in sa.key -pubout -out sa.pub
kubeconfigs
