# zen: the two commands a user needs are `make run` and `make test`.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export GOTOOLCHAIN := local

# Pinned tool versions; tools install into the git-ignored bin/.
BUF_VERSION          := v1.75.0
PROTOC_GEN_GO        := v1.36.12
PROTOC_GEN_GO_GRPC   := v1.6.2
GRPC_GATEWAY_VERSION := v2.32.0
STATICCHECK_VERSION  := v0.8.2

MODULES := proto/gen services/platform services/memory services/router services/executor services/edge gateway cmd/zen deploy
PKGS    := $(addprefix ./,$(addsuffix /...,$(MODULES)))
# cmd/zen and deploy test the binary end to end; the rest test packages on their own.
UNIT_PKGS := $(addprefix ./,$(addsuffix /...,$(filter-out cmd/zen deploy,$(MODULES))))
GENERATED := proto/gen/zen gateway/openapi

# The version is the release tag (dev without one); the commit, marked -dirty
# when the tree has changes, is stamped on its own, so neither repeats it.
VERSION ?= $(shell git describe --tags --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git describe --always --dirty --exclude='*' 2>/dev/null || echo unknown)
# The commit's date, which the version tool reports as last_updated.
UPDATED ?= $(shell git log -1 --format=%cs 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT) -X main.updated=$(UPDATED)

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

$(BIN)/.buf-$(BUF_VERSION):
	GOBIN=$(BIN) go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	touch $@
$(BIN)/.plugins-$(PROTOC_GEN_GO)-$(PROTOC_GEN_GO_GRPC)-$(GRPC_GATEWAY_VERSION):
	GOBIN=$(BIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO)
	GOBIN=$(BIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC)
	GOBIN=$(BIN) go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION) \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION)
	touch $@
$(BIN)/.staticcheck-$(STATICCHECK_VERSION):
	GOBIN=$(BIN) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	touch $@

.PHONY: tools
tools: $(BIN)/.buf-$(BUF_VERSION) $(BIN)/.plugins-$(PROTOC_GEN_GO)-$(PROTOC_GEN_GO_GRPC)-$(GRPC_GATEWAY_VERSION) $(BIN)/.staticcheck-$(STATICCHECK_VERSION) ## install the pinned tools into bin/

.PHONY: gen
gen: $(BIN)/.buf-$(BUF_VERSION) $(BIN)/.plugins-$(PROTOC_GEN_GO)-$(PROTOC_GEN_GO_GRPC)-$(GRPC_GATEWAY_VERSION) ## regenerate code from proto/ (offline)
	buf lint
	go build -o $(BIN)/protoc-gen-zen-utf8 ./proto/gen/cmd/protoc-gen-zen-utf8
	rm -rf $(GENERATED)
	buf generate
# One OpenAPI document: the routes the gateway serves itself join the generated ones.
	go run ./gateway/internal/openapimerge gateway/openapi/zen.swagger.json gateway/routes.swagger.json

.PHONY: gen-check
gen-check: gen ## fail when the committed generated code differs from what make gen writes
	@drift=$$(git status --porcelain --untracked-files=all -- $(GENERATED) | grep -v '^[AM] ' || true); \
	if [ -n "$$drift" ] || ! git diff --quiet -- $(GENERATED); then \
		echo "$$drift"; git diff --stat -- $(GENERATED); \
		echo "generated code is out of date: run make gen and commit the result"; exit 1; fi

.PHONY: build
build: ## build bin/zen
	go build -ldflags '$(LDFLAGS)' -o $(BIN)/zen ./cmd/zen

.PHONY: run
run: build ## run every role in one process: MCP on 127.0.0.1:8080/mcp, gateway on 127.0.0.1:8081
	$(BIN)/zen serve

.PHONY: cluster
# Two edges (:8080, :8082) and the gateway (:8081); ZEN_REPLICAS_EXECUTOR=2 and the like start more replicas.
cluster: build deps ## start redis-server and every role as its own process on loopback
	ZEN_BIN=$(BIN)/zen scripts/cluster.sh up

.PHONY: cluster-down
cluster-down: ## stop what make cluster started
	ZEN_BIN=$(BIN)/zen scripts/cluster.sh down

.PHONY: deps
deps: ## install redis-server and chromium (Debian packages), which the Redis and thread browser tests run for real
	@missing=""; \
	command -v redis-server >/dev/null || missing=" redis-server"; \
	command -v redis-cli >/dev/null || missing="$$missing redis-tools"; \
	command -v chromium >/dev/null || missing="$$missing chromium fonts-liberation libgl1-mesa-dri"; \
	[ -z "$$missing" ] || { \
		echo "installing$$missing from Debian's packages"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
			--no-install-recommends $$missing >/dev/null; }

# Real MCP clients for the end-to-end tests: the official TypeScript SDK and
# the conformance suite, with Node 22 itself, all from the npm registry
# (pinned by test/mcp-clients/package-lock.json).
CLIENTS := test/mcp-clients
$(CLIENTS)/node_modules/.installed: $(CLIENTS)/package-lock.json
	@command -v npm >/dev/null || { \
		echo "installing npm from Debian's packages"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm >/dev/null; }
	npm ci --prefix $(CLIENTS) --no-audit --no-fund --loglevel=error
	touch $@

.PHONY: node-deps
node-deps: $(CLIENTS)/node_modules/.installed ## install Node 22 and the MCP client packages the tests drive

.PHONY: test
test: deps node-deps ## run every test, with the race detector
	ZEN_REQUIRE_NODE=1 ZEN_REQUIRE_CHROMIUM=1 go test -race -shuffle=on -count=1 $(PKGS)

.PHONY: unit
unit: ## the fast tests: every package but the end-to-end ones, no real servers (-short), no race detector
	go test -short -shuffle=on -count=1 $(UNIT_PKGS)

.PHONY: lint
lint: $(BIN)/.staticcheck-$(STATICCHECK_VERSION) ## gofmt, go vet and staticcheck
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet $(PKGS)
	staticcheck $(PKGS)

.PHONY: bench
bench: ## run the end-to-end benchmarks (cmd/zen); docs/BENCHMARKS.md gives the command of every other
	go test -run '^$$' -bench . -benchtime 2000x ./cmd/zen/...
