# kubepact's container image: one image for all three shapes
# (`kubepact mcp`, `kubepact sidecar`, `kubepact operator`), chosen by the
# first argument, and beside it the slim sidecar build /kubepact-sidecar
# (`/kubepact-sidecar sidecar …`) that injected sidecars run.
#
#   make docker-build IMG=registry.example.com/kubepact:v1.2.3
#
# Needs Docker (BuildKit). Where there is none, `make image` builds the same
# image with go-containerregistry (hack/image) into an OCI layout; its test
# holds this file and that build to the same entrypoint, user, labels and
# build flags. The one difference is the base: here distroless static
# (nonroot variant, pinned by digest), there an empty base whose layer
# carries the nonroot passwd and group entries and the CA bundle itself.

# The builder runs on the build machine's platform and cross-compiles.
FROM --platform=$BUILDPLATFORM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=dev
# Static (no libc in the image), stripped, no build paths in the binary, the version
# stamped, and kubepact's patches to its JSON decoding applied (hack/sdkpatch), as `make build` does.
RUN go run ./hack/sdkpatch -exec CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/kubepact ./cmd/kubepact
# The slim sidecar build of the same source: `kubepact sidecar` and
# `version` only, no Kubernetes libraries; injected sidecars run it.
RUN go run ./hack/sdkpatch -exec CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -tags sidecaronly -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/kubepact-sidecar ./cmd/kubepact

# gcr.io/distroless/static-debian12:nonroot: no shell, no package manager,
# no libc; CA certificates, tzdata and the nonroot user (65532).
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="kubepact" \
      org.opencontainers.image.description="Kubernetes-native MCP server for Pacto service contracts: kubepact mcp, sidecar and operator in one image" \
      org.opencontainers.image.source="https://github.com/kubepact/kubepact" \
      org.opencontainers.image.url="https://github.com/kubepact/kubepact" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=build --chown=0:0 --chmod=0555 /out/kubepact /kubepact
COPY --from=build --chown=0:0 --chmod=0555 /out/kubepact-sidecar /kubepact-sidecar
WORKDIR /home/nonroot
USER 65532:65532
ENTRYPOINT ["/kubepact"]
