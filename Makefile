# ingest: `make help` lists the targets.
SHELL := /bin/bash
GO      ?= go
BIN     := bin
PREFIX  ?= /usr/local
# The release is written in the file VERSION only: the binary embeds it
# (any build names itself, the Dockerfile's too), the image is tagged with
# it, and deploy/'s tests hold CHANGELOG.md and the Kubernetes tag to it.
VERSION := $(shell cat VERSION)
# Stamped here too, so that a build without VCS stamping (-buildvcs=false,
# no .git) still names its revision and date in `ingest version`.
REVISION ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
BUILT    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
# How far past its release the tree is: the commits since the one that last
# changed VERSION (0 at the release), and whether the tree holds changes no
# commit does. The binary says so after its version (0.3.0+12.gREV), and
# the image's tag with it, so that no build but the release's own takes
# the tag the manifests pin. Empty without git: the binary then says it
# cannot count (util/buildinfo).
SINCE    ?= $(shell c=$$(git log -1 --format=%H -- VERSION 2>/dev/null) && [ -n "$$c" ] && git rev-list --count $$c..HEAD)
DIRTY    ?= $(shell git diff --quiet HEAD -- 2>/dev/null || { git rev-parse HEAD >/dev/null 2>&1 && echo true; })
LDFLAGS := -s -w -X main.revision=$(REVISION) -X main.built=$(BUILT) -X main.since=$(SINCE) -X main.dirty=$(DIRTY)
# The image's tag is the build's version with "_" for the "+" a tag cannot
# hold: the release alone at its own clean commit.
TAG     := $(VERSION)$(shell m=""; [ "$(SINCE)" = 0 ] || m="$(SINCE).g$(REVISION)"; [ -n "$(SINCE)" ] || m=unknown; \
	[ -z "$(DIRTY)" ] || m="$${m:+$$m.}dirty"; [ -z "$$m" ] || echo "_$$m")
# The container image's name is written in deploy/kubernetes/image/kustomization.yaml only.
IMAGE   := $(shell awk '/newName:/{print $$2}' deploy/kubernetes/image/kustomization.yaml):$(TAG)

.PHONY: help build install image test bench soak edge partition sim sim-sweep sim-mutants demo lint fuzz mutants deps clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

deps: ## download Go modules; make sure redis-server, postgresql, chromium and its fonts, systemd-analyze, promtool and xmllint are installed
	@scripts/ensure-redis.sh
	@scripts/ensure-postgres.sh
	@scripts/ensure-chromium.sh
	@scripts/ensure-tools.sh
	@$(GO) mod download
	@cd deploy && $(GO) mod download

build: ## build bin/ingest (static, versioned) and bin/fakeyt
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ingest ./cmd/ingest
	$(GO) build -o $(BIN)/fakeyt ./cmd/fakeyt

install: build ## install ingest into $(PREFIX)/bin (default /usr/local/bin)
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/ingest $(DESTDIR)$(PREFIX)/bin/ingest

image: ## build the image deploy/kubernetes/image/kustomization.yaml names, tagged VERSION at the release (VERSION_N.gREV past it); then docker push it
	docker build -t $(IMAGE) --build-arg REVISION=$(REVISION) --build-arg BUILT=$(BUILT) --build-arg SINCE=$(SINCE) --build-arg DIRTY=$(DIRTY) .

# The race detector checks every package of ours. SQLite's C, translated to
# Go (modernc.org/sqlite/lib), runs uninstrumented, as C through cgo would:
# instrumented, it made every test that writes SQLite many times slower.
# cmd/ingest's tests build the binary they run without -race, but for
# the few whose point is concurrency inside one process (their raceTests,
# docs/testing.md), which build it with the same flags.
RACE := -race -gcflags=modernc.org/sqlite/lib=-race=false
# A binary built with -race waits a second at exit, by default, for other
# goroutines to report; make test sets atexit_sleep_ms=0 for every test
# binary and what they start (a race found still fails the run).

# A package's -timeout is there to print a hung test's goroutines before
# CI stops the whole run at 90 minutes, not to guess how long a package
# takes: a busy machine takes several times longer.
PKG_TIMEOUT ?= 80m

# Every test that draws randomness takes its seed from one variable (the
# simulation's, the pacing days', the prune's, the partition lab's): unset,
# as make test leaves them, each runs on the fixed seeds kept beside it, so
# that a revision's verdict is the same on every run; make sim, sim-sweep
# and partition draw new ones ("random"). docs/testing.md, "Seeds".

# The checks that drive Chromium or run make build (cmd/ingest's) or
# install from npm (export's, and the exports read by DuckDB) wait on other programs more than they
# compute: they run in test processes of their own beside the suite,
# instead of at the end of cmd/ingest's, the suite's longest package.
# deploy/'s checks run beside it too.
BESIDE := ^(TestDashboardAccessibility|TestDashboardInBrowser|TestPhoneInBrowser|TestReaderScreenshots|TestListenerRulesInBrowser|TestParquetOfMovedRunsReadsBack|TestMakeBuildStampsVersionWithoutVCS|TestExportTypesInDuckDB)$$

# Every test binary of make test runs under scripts/cputime.sh, which
# notes its CPU-seconds; make test prints them by package, and its own
# (every process it waited for), before the runs beside the suite, so that
# its output still ends with go test's ok and FAIL lines.
CPU := -exec $(CURDIR)/scripts/cputime.sh

test: deps ## run every test with -race against real redis-server and SQLite, the pacing days without it, the browser checks and deploy/'s beside them; print the CPU-seconds of each package and of the whole run
	@days=$$(mktemp); beside=$$(mktemp); deploy=$$(mktemp); cpu=$$(mktemp); times=$$(mktemp); start=$$(date +%s); \
	export INGEST_CPU_LOG=$$cpu INGEST_CPU_ROOT=$(CURDIR); \
	INGEST_CPU_TAG=days $(GO) test $(CPU) -count=1 -timeout 75m -run '^TestDays' ./pace/ >$$days 2>&1 & pid=$$!; \
	INGEST_CPU_TAG=beside GORACE="$$GORACE atexit_sleep_ms=0" $(GO) test $(CPU) $(RACE) -count=1 -timeout $(PKG_TIMEOUT) -run '$(BESIDE)' ./cmd/ingest/ ./export/ >$$beside 2>&1 & bpid=$$!; \
	(cd deploy && $(GO) test $(CPU) -count=1 ./...) >$$deploy 2>&1 & dpid=$$!; \
	GORACE="$$GORACE atexit_sleep_ms=0" $(GO) test $(CPU) $(RACE) -count=1 -timeout $(PKG_TIMEOUT) -skip '$(BESIDE)' ./...; rc=$$?; \
	wait $$pid; drc=$$?; wait $$bpid; brc=$$?; wait $$dpid; prc=$$?; \
	times >$$times; awk -v wall=$$(( $$(date +%s) - start )) -f scripts/cpu-table.awk $$times $$cpu; \
	echo "go test -count=1 -run '^TestDays' ./pace/ (beside the suite above):"; cat $$days; \
	echo "go test -race -run '$(BESIDE)' ./cmd/ingest/ ./export/ (beside it):"; cat $$beside; \
	echo "cd deploy && go test ./... (beside it):"; cat $$deploy; rm -f $$days $$beside $$deploy $$cpu $$times; \
	test $$rc -eq 0 -a $$drc -eq 0 -a $$brc -eq 0 -a $$prc -eq 0

bench: deps ## run the benchmarks and print their tables (ratios against baselines)
	@scripts/bench.sh

soak: ## flood serve --public, run --listen --public, and the deployed shape (run --listen --public --regions all, tracking on, anonymous API clients) for ten minutes each (INGEST_SOAK_FOR to change); print and check RSS, the hot pages' ratio, the right token, the API's metering, and the daemon's missed slots and units over the limit
	INGEST_SOAK=1 $(GO) test -count=1 -timeout 60m -v -run 'TestFloodOfAPublicListener' ./cmd/ingest/ | grep -v '^=== '

partition: ## hosts on network namespaces of their own under a nemesis for 20 minutes (SEED=N replays one, PARTITION_FOR to change, PARTITION_HISTORY=DIR keeps the history; needs root), then the checker's verdict
	set -o pipefail; $(GO) test -count=1 -timeout 90m -v -run '^TestPartition$$' ./internal/rig/partition/ -partition.for=$${PARTITION_FOR:-20m} -partition.seed=$${SEED:-random} -partition.history=$${PARTITION_HISTORY:-} | grep -v '^=== '

edge: deps ## Varnish with the shipped VCL before two serve --public replicas on PostgreSQL, the daemon landing runs, a reader flood for ten minutes (INGEST_EDGE_FOR to change), the replicas restarted and then stopped under it and all started again across the landings meanwhile, a sign-in through the cache on both; print and check the hit ratio of cacheable asks, freshness after each landing and after the restart, no private answer cached, errors, RSS and CPU per million readers
	INGEST_EDGE=1 $(GO) test -count=1 -timeout 60m -v -run '^TestEdge(Published)?$$' ./cmd/ingest/ | grep -v '^=== '

sim: ## the whole daemon on virtual time from a seed drawn from the kernel (SEED=N replays one): DAYS (default 30) simulated days at the default regions, ALL_DAYS (default 7) at every region, under a nemesis (restarts, upstream failures, quota refusals, wrong Dates) with readers, on the shipped pools, a scarce one, one whose Pacific day binds, a short one at every region, two tiered at --max-stale 3h, and forty days of one chart across the year's end (SIM_HISTORY=DIR keeps the databases and logs); then the checker's verdict
	set -o pipefail; INGEST_SIM_SEED=$${SEED:-random} INGEST_SIM_DAYS=$${DAYS:-30} INGEST_SIM_ALL_DAYS=$${ALL_DAYS:-7} INGEST_SIM_HISTORY=$(SIM_HISTORY) \
	$(GO) test -count=1 -timeout 0 -v -run '^TestSim' ./internal/rig/sim/ | grep -v '^=== '

sim-sweep: ## the simulation over SEEDS (default 20) seeds drawn from the kernel, DAYS (default 2) days each, every shape make test runs (ALL=1 adds the four at every region), a core each: a table of seed, shape, verdict, first failure and the line that replays it
	@scripts/sim-sweep.sh

sim-mutants: ## each of the product's past bugs applied alone in a scratch copy, MUTANT_JOBS (default 2) at a time, the simulation's shapes on their kept seeds (SIM_MUTANT_SEEDS to change) for 2 days: the checker must catch every one; a table of which check caught it and on how many seeds; then MUTANTS (default 25) mutants drawn from operators over the statements the simulation runs, from a seed it prints (SEED=N replays): a table and the score, caught of drawn
	@scripts/sim-mutants.sh
	@scripts/sim-mutants-drawn.sh

demo: build ## run the main job against the fake upstream, a search, a report, the API; print the dashboard URL
	@scripts/demo.sh

# staticcheck and deadcode at fixed versions, fetched by the go command
# like modules; the root package's tests read these two lines, so that
# make test runs them too.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE := golang.org/x/tools/cmd/deadcode@v0.52.0

lint: ## go vet, staticcheck, deadcode over the commands, gofmt, the house clock's analyzer, and the deploy/ files against their validators
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) test -count=1 -run '^TestNothingUnreachable$$' .
	$(GO) test -count=1 ./internal/rig/hostclock/
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

fuzz: ## fuzz the costs.yaml loader for 30 s
	$(GO) test -run '^$$' -fuzz FuzzParseCosts -fuzztime 30s ./costs

mutants: deps ## each limiter mutant in a scratch copy, two at a time: the tests of the promise it breaks must catch it
	@scripts/mutants.sh

clean: ## remove build output and demo files
	rm -rf $(BIN) demo
