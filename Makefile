SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

# Tools, pinned; installed into ./bin by `make tools`.
BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.0
MOCKGEN_VERSION := v0.6.0
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
VTPROTO_VERSION := v0.6.0

BIN := $(CURDIR)/bin

# The Kubernetes control plane of the tests (internal/testenv/k8senv): built
# once per machine, outside the work tree. EDGEKIT_K8S_TESTENV overrides
# where; the default is the one k8senv.DefaultDir computes.
K8S_TESTENV ?= $(or $(EDGEKIT_K8S_TESTENV),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/edgekit/k8s-testenv/v1.34.2)
export PATH := $(BIN):$(PATH)

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-16s %s\n", $$1, $$2}'

.PHONY: tools
tools: $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc $(BIN)/protoc-gen-go-vtproto $(BIN)/mockgen $(BIN)/benchstat ## Install the pinned tools into ./bin

$(BIN)/buf:
	GOBIN=$(BIN) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(BIN)/protoc-gen-go:
	GOBIN=$(BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(BIN)/protoc-gen-go-grpc:
	GOBIN=$(BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
$(BIN)/protoc-gen-go-vtproto:
	GOBIN=$(BIN) go install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@$(VTPROTO_VERSION)
$(BIN)/mockgen:
	GOBIN=$(BIN) go install go.uber.org/mock/mockgen@$(MOCKGEN_VERSION)
$(BIN)/benchstat:
	GOBIN=$(BIN) go install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION)

.PHONY: generate
generate: $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc $(BIN)/protoc-gen-go-vtproto $(BIN)/mockgen ## Regenerate all generated code (buf + go generate)
	buf generate
	go generate ./...

.PHONY: checkgenerate
checkgenerate: generate ## Fail when regenerating changes checked-in code
	@if ! git diff --exit-code --stat; then echo "generated code is stale: run make generate and commit" >&2; exit 1; fi
	@if [ -n "$$(git status --porcelain --untracked-files=all)" ]; then git status --porcelain; echo "generate created untracked files" >&2; exit 1; fi

.PHONY: golden
golden: ## Rewrite the generator's golden files (gen/testdata)
	go test ./gen/... -run Golden -update

.PHONY: lint
lint: $(BIN)/buf ## buf lint and go vet
	buf lint
	go vet ./...

.PHONY: test
test: ## Run every test with the race detector
	go test -race -count=1 ./...

.PHONY: k8s-testenv
k8s-testenv: ## Build the Kubernetes test control plane (apiserver, controller-manager, scheduler, kwok) once, into $(K8S_TESTENV)
	bash internal/testenv/k8senv/build/build.sh "$(K8S_TESTENV)"

.PHONY: bench
bench: $(BIN)/benchstat ## Run the benchmarks and print the benchstat table
	go test -run '^$$' -bench . -benchmem -count 6 ./internal/testpb/vtbench/ ./internal/testpb/ ./fieldmap/ ./executor/ | tee bench.out
	benchstat -col /impl bench.out

.PHONY: run
run: ## Run a whole region on this machine until Ctrl-C (edgekit up)
	go run ./cmd/edgekit up

.PHONY: clean
clean: ## Remove installed tools and benchmark output
	rm -rf $(BIN) bench.out
