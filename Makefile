# ingest: `make help` lists the targets.
SHELL := /bin/bash
GO    ?= go
BIN   := bin

.PHONY: help build test bench demo lint fuzz mutants deps clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-7s %s\n", $$1, $$2}'

deps: ## download Go modules and make sure redis-server is installed
	@scripts/ensure-redis.sh
	@$(GO) mod download

build: ## build bin/ingest and bin/fakeyt
	$(GO) build -o $(BIN)/ingest ./cmd/ingest
	$(GO) build -o $(BIN)/fakeyt ./cmd/fakeyt

test: deps ## run every test with -race against real redis-server and SQLite
	$(GO) test -race -count=1 -timeout 30m ./...

bench: deps ## run the benchmarks and print their tables (ratios against baselines)
	@scripts/bench.sh

demo: build ## run the main job against the fake upstream, then a search and a report
	@scripts/demo.sh

lint: ## go vet and gofmt
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

fuzz: ## fuzz the costs.yaml loader for 30 s
	$(GO) test -run '^$$' -fuzz FuzzParseCosts -fuzztime 30s .

mutants: deps ## apply each limiter mutation to a scratch copy; the quota tests must catch every one
	@scripts/mutants.sh

clean: ## remove build output and demo files
	rm -rf $(BIN) demo
