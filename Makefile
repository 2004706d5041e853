# kvbench: `make bench` is the main job, `make test` runs every test.
# Both install what they need (Debian's librocksdb-dev) first.

GO       ?= go
SHELL    := /bin/bash
.SHELLFLAGS := -o pipefail -c
# RocksDB is compiled in when its headers are present (see `deps`).
TAGS     ?= $(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)
# The default run: a small data set that fits a laptop and a CI machine.
KEYS_MIL ?= 0.1
VALSZ    ?= 1024
# Goroutines of the warm reads and the mixes: one, and one per CPU of the
# machine at hand; the warm reads also run at 8× the CPUs (OVERSUB), a row
# of its own that measures oversubscription (docs/methodology.md, "The
# scheduler's wait").
NPROC    := $(shell nproc 2>/dev/null || echo 2)
THREADS  ?= $(if $(filter 1,$(NPROC)),1,1$(comma)$(NPROC))
OVERSUB  ?= $(shell echo $$(( $(NPROC) * 8 )))
DIR      ?=
RESULTS  ?= results
BENCH_FLAGS = -keys_mil $(KEYS_MIL) -valsz $(VALSZ) $(if $(DIR),-dir $(DIR))
# The LSMs' data block sizes of make bench's point-read, scan and budget
# rows: both sides of the trade (docs/engines.md, "Data block size").
BLOCKS   ?= 4KiB,32KiB
comma    := ,


.PHONY: audit smoke-tests smoke-paths unit-race unit-side bench-sim bench-sim-run valgrind-deps memfloor memfloor-run all bench bench-run bench-bin bench-full bench-full-run summary report report-deps report-test report-screenshot history-screenshot bench-mem test deps vet unit smoke prefetch prefetch-run embed-data embed-clean seed003 seed004

all: test

# apt_install,CHECK,PACKAGE,WHY,CODE installs Debian's PACKAGE unless the
# command CHECK succeeds: as root directly, otherwise through sudo when it
# needs no password; failing both it says how (and WHY) and exits with CODE.
apt_install = if $(1) >/dev/null 2>&1; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO=sudo; else \
	  [ -n "$(5)" ] || echo "kvbench: $(2) is missing; install it with 'sudo apt-get install $(2)' $(3)" >&2; exit $(4); fi; \
	echo "kvbench: installing $(2)" >&2; \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null

# deps installs Debian's RocksDB library when missing; without root or
# sudo the suite runs without RocksDB (make test says so once, itself:
# DEPS_QUIET).
deps:
	@$(call apt_install,dpkg -s librocksdb-dev,librocksdb-dev,to include RocksDB. Continuing without it.,0,$(DEPS_QUIET))

# ROCKSDB: whether TAGS compiles RocksDB in; the test steps skip the
# RocksDB variants without it.
ROCKSDB = $(filter rocksdb,$(TAGS))

# valgrind-deps installs Debian's valgrind (the gate's instruction counts,
# internal/valgrind's test); without root or sudo the tests that need it
# skip.
valgrind-deps:
	@$(call apt_install,command -v valgrind,valgrind,for the tests that count instructions. Continuing without it.,0)

# bench: the main job, sized to answer six questions in a few minutes
# (docs/benchmarks.md, "What make bench measures"): write throughput and
# amplification (populate, sync off, and the steady state of an
# overwrite); warm point reads at 1 and 16 threads; point reads in a
# memory budget, uniform and Zipfian, beside the disk's own 4 KiB
# random-read rate; mixed reads and writes under skew (YCSB A and C);
# range scans (seek and read 100); open time (cold).
# The point-read, budget and scan rows run the LSMs at each of BLOCKS.
# One test binary runs every step; raw results go to $(RESULTS)/bench.txt,
# then the summary ($(RESULTS)/summary.txt) and the report page
# ($(RESULTS)/report.html). bench-full runs every benchmark of both steps.
COUNT     ?= 3
BENCHTIME ?= 0.3s
# The mixed-workload row: YCSB A (50 % updates) and C (reads) over YCSB's
# Zipfian keys; A a fixed count of operations, so each round is one fresh
# copy of the fixture, C (on the fixture itself) timed as the read rows
# are; the LSMs at 4 KiB blocks, as the read rows' first.
# The overwrite row: the steady-state pass (docs/workloads.md, "Steady
# state"), at populate's block size, beside it, with the LSMs' memtables
# at 4 MiB so the data set is 25 of them: at 64 MiB it is 1.6, each pass
# one or two flushes, and whether a pass compacts flips from one pass to
# the next.
YCSB_BENCHTIME ?= 20000x
YCSB_BLOCK     ?= 4KiB
OVERWRITE_PASS ?= 2
OVERWRITE_MEMTABLE ?= 4
OPEN_BENCHTIME ?= 10x
MEM_COUNT ?= 1
BENCH_BIN  = $(RESULTS)/kvbench.test
PROGRESS   = $(RESULTS)/benchprogress
RUN_BENCH  = $(BENCH_BIN) -test.run '^$$' -test.count $(COUNT) $(BENCH_FLAGS)

bench: deps
	@mkdir -p $(RESULTS)
	$(MAKE) --no-print-directory bench-run TAGS="$(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)"

# The stores (no Memory rail) and the benchmarks of each workload come
# from the registries (the families in internal/families, engines in
# internal/engine), so a new engine or workload needs no edit here.
PATTERN = $(shell $(GO) run ./internal/cmd/genwrappers -pattern $(1))
STORES  = $(shell $(GO) run -tags '$(TAGS)' ./internal/cmd/genwrappers -list open | sed 's/^BenchmarkOpen//' | paste -sd'|')

bench-run: bench-bin
	@stores='$(STORES)'; set -ex; \
	$(PROGRESS) -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench "^BenchmarkPopulate($$stores)\$$/valsz/batch/sync=false" \
	  -test.benchtime 1x; \
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench "^BenchmarkReadRandom($$stores)\$$" \
	  -test.benchtime $(BENCHTIME) -cache warm -threads $(THREADS),$(OVERSUB) -block_size $(BLOCKS); \
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench "^BenchmarkScan($$stores)\$$" \
	  -test.benchtime $(BENCHTIME) -cache warm -threads 1 -block_size $(BLOCKS); \
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench "^BenchmarkOpen($$stores)\$$" \
	  -test.benchtime $(OPEN_BENCHTIME) -cache cold; \
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench '^BenchmarkDisk$$/op=randread-4k' \
	  -test.benchtime $(BENCHTIME) -threads 1; \
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench "^BenchmarkYCSB($$stores)\$$" \
	  -test.benchtime $(YCSB_BENCHTIME) -ycsb A -dist zipf -threads $(THREADS) -block_size $(YCSB_BLOCK); \
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench "^BenchmarkYCSB($$stores)\$$" \
	  -test.benchtime $(BENCHTIME) -ycsb C -dist zipf -threads $(THREADS) -block_size $(YCSB_BLOCK); \
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(RUN_BENCH) -test.bench "^BenchmarkOverwrite($$stores)\$$" \
	  -test.benchtime 1x -overwrite_passes $(OVERWRITE_PASS) -memtable_mb $(OVERWRITE_MEMTABLE)
	@$(MAKE) --no-print-directory bench-mem MEM_BUILT=1 MEM_WORKLOADS=readrandom COUNT=$(MEM_COUNT) MEM_BENCHTIME=$(BENCHTIME) MEM_BLOCKS=$(BLOCKS) MEM_DIST=uniform,zipf
	$(call record,$(RESULTS)/bench.txt,bench)
	@$(MAKE) --no-print-directory summary report

# audit: which engine settings decide a rank. make bench's rows (warm
# reads and scans, YCSB A and C, populate, overwrite, open) for every
# engine at the suite's settings and with each engine setting of
# benchstat/audit/settings.go flipped, one process each, AUDIT_ROUNDS
# interleaved rounds; the table goes into docs/engines.md ("Rank-sensitivity
# audit"), the raw results to $(RESULTS)/audit. Time: docs/targets.md.
AUDIT_ROUNDS ?= 3
audit: deps
	@mkdir -p $(RESULTS)
	$(MAKE) --no-print-directory bench-bin TAGS="$(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)"
	$(GO) run ./benchstat/kvb audit -bin $(BENCH_BIN) -rounds $(AUDIT_ROUNDS) $(BENCH_FLAGS) -o $(RESULTS)/audit -doc docs/engines.md

# bench-sim: the instruction counts of make bench's warm point reads and
# scans on one thread (kvb sim under Valgrind's callgrind: instr/op
# and est-cycles/op of each timed loop), for a history that sees small
# changes: make bench's times resolve steps of 10-20 % on a shared VM,
# the counts about 1 % (docs/history.md, "Change points"). Each count is a
# process of its own. Results in $(RESULTS)/bench-sim.txt, recorded as
# role=bench-sim. Needs valgrind (valgrind-deps installs it).
SIM_COUNT     ?= 3
SIM_BENCHTIME ?= 2000x,Scan=50x
SIM_FLAGS      = -threads 1 -cache warm -keys_mil 0.01 -valsz 256 $(if $(DIR),-dir $(DIR))
bench-sim: deps valgrind-deps
	@command -v valgrind >/dev/null || { echo "bench-sim: needs valgrind (make valgrind-deps, as root or with sudo)" >&2; exit 2; }
	@mkdir -p $(RESULTS)
	$(MAKE) --no-print-directory bench-sim-run TAGS="$(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)"

bench-sim-run: bench-bin
	$(GO) build -o $(RESULTS)/kvb ./benchstat/kvb
	@stores='$(STORES)'; set -ex; \
	$(RESULTS)/kvb sim -benchtime '$(SIM_BENCHTIME)' $(BENCH_BIN) -test.run '^$$' -test.bench "^Benchmark(ReadRandom|Scan)($$stores)\$$" \
	  -test.count $(SIM_COUNT) -test.cpu 1 $(SIM_FLAGS) >$(RESULTS)/bench-sim.txt
	$(call record,$(RESULTS)/bench-sim.txt,bench-sim)

# record: keep a results file in the history store (docs/history.md) with
# the commit, its date, the branch, whether the tree was dirty and when
# the run started; one line says where. HISTORY=off skips it; the tests
# and the gate's own runs never record.
HISTORY ?= on
# RUN_DATE: when make started, in UTC; a sub-make keeps its parent's.
RUN_DATE := $(or $(RUN_DATE),$(shell date -u +%Y-%m-%dT%H:%M:%SZ))
export RUN_DATE
define record
	@if [ "$(HISTORY)" != off ]; then $(GO) run ./benchstat/kvb history add $(1) -label role=$(2) \
	  -label commit=$$(git rev-parse HEAD 2>/dev/null || echo none) -label commit-date=$$(git show -s --format=%cI HEAD 2>/dev/null || echo none) \
	  -label branch=$$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo none) \
	  -label dirty=$$(test -z "$$(git status --porcelain --untracked-files=no 2>/dev/null)" && echo false || echo true) \
	  -label date=$(RUN_DATE) || echo "history: $(1) was not recorded" >&2; fi
endef

# The test binary, built once for every step, and the runner that copies
# its results to the results file and, on a terminal, keeps a live line on
# /dev/tty (benchmark, round, elapsed, estimate left) that never enters
# the results.
bench-bin:
	@mkdir -p $(RESULTS)
	$(GO) test -c -tags '$(TAGS)' -o $(BENCH_BIN) .
	@$(GO) build -o $(PROGRESS) ./internal/cmd/benchprogress

# bench-full: every benchmark of both steps (populate with sync on and
# off; reads warm and cold at every -hit_rate and -threads; full scans,
# seek-and-scan, open warm and cold, every disk figure; the harness alone),
# and the memory-limited row for reads and populate, at 1 s per benchmark.
FULL_COUNT ?= 3
bench-full: deps
	@mkdir -p $(RESULTS)
	$(MAKE) --no-print-directory bench-full-run TAGS="$(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)"

bench-full-run: bench-bin
	$(PROGRESS) -o $(RESULTS)/bench.txt -- $(BENCH_BIN) -test.run '^$$' -test.bench '$(call PATTERN,write)' -test.benchtime 1x \
	  -test.count $(FULL_COUNT) $(BENCH_FLAGS)
	$(PROGRESS) -a -o $(RESULTS)/bench.txt -- $(BENCH_BIN) -test.run '^$$' -test.bench '$(call PATTERN,read)' -test.benchtime 1s \
	  -test.count $(FULL_COUNT) $(BENCH_FLAGS) -threads $(THREADS) -block_size $(BLOCKS)
	$(GO) test -run '^$$' -bench 'BenchmarkHarness' -count $(FULL_COUNT) ./internal/dataset | tee -a $(RESULTS)/bench.txt # the harness alone, no engine
	@$(MAKE) --no-print-directory bench-mem MEM_BUILT=1 COUNT=$(FULL_COUNT) MEM_BLOCKS=$(BLOCKS)
	$(call record,$(RESULTS)/bench.txt,bench-full)
	@$(MAKE) --no-print-directory summary report

# summary: the engines side by side, one section per question, from the
# raw results; printed and written to $(RESULTS)/summary.txt as printed.
SUMMARY_IN ?= $(RESULTS)/bench.txt
summary:
	@echo
	@$(GO) run ./benchstat/kvb summary -o $(RESULTS)/summary.txt $(SUMMARY_IN)

# report: $(RESULTS)/report.html, one page with no outside references: the
# summary's tables, every chart inline (SVG), the run's configuration and
# each engine's settings.
report:
	@$(GO) run ./benchstat/kvb report -o $(RESULTS)/report.html $(SUMMARY_IN)

# report-deps installs Debian's chromium for the report's browser test.
report-deps:
	@$(call apt_install,command -v chromium,chromium,for the report test.,1)

# report-test: the report page and the history page rendered in headless
# Chromium: every table and chart there, no text overflowing
# (benchstat/report, benchstat/history).
report-test: report-deps
	KVBENCH_CHROMIUM=required $(GO) test -count 1 -run 'TestPage|TestHistoryPage' ./benchstat/report ./benchstat/history

# report-screenshot: docs/img/report.png, the page of the summary test's
# results file at a laptop's width, for the README.
report-screenshot: report-deps
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	$(GO) run ./benchstat/kvb report -o "$$d/report.html" benchstat/internal/summary/testdata/bench.txt && \
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$$d/profile" \
	  --window-size=1280,2000 --screenshot=docs/img/report.png "file://$$d/report.html" 2>/dev/null

# history-screenshot: docs/img/history.png, the history page of the
# history benchstat/history's tests build from the summary test's results
# file (14 commits, a regression, an improvement, a newer Go, three bbolt
# releases), at a laptop's width, for the README.
history-screenshot: report-deps
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	$(GO) test -count 1 -run '^TestDemoPage$$' ./benchstat/history -args -demo="$$d/history.html" >/dev/null && \
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$$d/profile" \
	  --window-size=1280,1600 --screenshot=docs/img/history.png "file://$$d/history.html" 2>/dev/null

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.6.1

# bench-mem: the memory-limited row (docs/methodology.md, "A memory
# budget"): the same data set in a budget of a quarter of it, readahead
# off; random reads (one thread, all hits, steady state after a warm-up
# pass) and populate (sync off). Each round of each benchmark runs in a
# process of its own, starting from the same empty budget, so an engine its
# budget kills (the kernel's out-of-memory killer) costs no other result;
# it is reported and the row goes on; so is a round that does not finish
# in MEM_TIMEOUT seconds. The report is the budget's watcher's (a process
# the run starts outside its budget): what the budget held at the end,
# printed, and its kill line, which stays in the results for the summary.
# The run's output goes through a pipe so that the loop also waits for the
# watcher, which writes just after the run ends.
# Skipped, with the reason, where the machine cannot make a memory cgroup.
MEM_LIMIT ?= 26MiB
MEM_BENCHTIME ?= 1s
MEM_TIMEOUT ?= 180
MEM_WORKLOADS ?= readrandom populate
# MEM_DIST: the reads' key distributions (-dist); empty is uniform.
MEM_DIST ?=
MEM_FLAGS = -mem_limit $(MEM_LIMIT) -readahead off -threads 1 -hit_rate 1 -cache warm $(if $(MEM_DIST),-dist $(MEM_DIST))
# MEM_BLOCKS: the LSMs' block sizes (-block_size), each in processes of its
# own like every round; empty runs the suite's default size.
MEM_BLOCKS ?=

bench-mem:
	@mkdir -p $(RESULTS)
	$(if $(MEM_BUILT),,$(GO) test -c -tags '$(TAGS)' -o $(BENCH_BIN) .)
	@lsms=" $$(for w in $(MEM_WORKLOADS); do $(GO) run ./internal/cmd/genwrappers -list $$w -data_blocks; done | paste -sd' ') "; \
	for t in $$(for w in $(MEM_WORKLOADS); do $(GO) run ./internal/cmd/genwrappers -list $$w; done); do \
	  case $$t in *Populate*) sub=/valsz/mem/batch/sync=false bt=1x;; *) sub=/valsz/mem/cache=warm bt=$(MEM_BENCHTIME);; esac; \
	  bss=-; case "$$lsms" in *" $$t "*) bss="$(or $(subst $(comma), ,$(MEM_BLOCKS)),-)";; esac; \
	  for bs in $$bss; do \
	  blk=$$([ $$bs = - ] || echo "-block_size $$bs"); \
	  echo "kvbench: $$t$$sub $$blk under -mem_limit $(MEM_LIMIT)" >&2; \
	  for i in $$(seq $(COUNT)); do \
	  { timeout $(MEM_TIMEOUT) $(RESULTS)/kvbench.test -test.run '^$$' -test.bench "^$$t\$$$$sub" -test.benchtime $$bt \
	    $(BENCH_FLAGS) $(MEM_FLAGS) $$blk 2>&1; echo $$? > $(RESULTS)/mem-rc; } | cat > $(RESULTS)/mem-run.txt; rc=$$(cat $(RESULTS)/mem-rc); \
	  if [ $$rc = 124 ]; then sed -i 's/^\(\[kvbench-kill\] [^ ]*\) cause=stopped /\1 cause=timeout /' $(RESULTS)/mem-run.txt; fi; \
	  grep -v '^\[kvbench\] building\|^\[kvbench\] fixture' $(RESULTS)/mem-run.txt | grep -v '^PASS$$\|^ok ' | grep -Ev '^Benchmark[^[:space:]]+[[:space:]]*$$' >> $(RESULTS)/bench.txt; \
	  grep '^Benchmark\|error' $(RESULTS)/mem-run.txt || true; \
	  report=$$(grep '^\[kvbench\] .* inside its -mem_limit .* budget; at the last sample' $(RESULTS)/mem-run.txt); \
	  if [ $$rc = 3 ]; then \
	    echo "kvbench: skipping the memory-limited row, this machine cannot make a memory budget: $$(grep -m1 'error:' $(RESULTS)/mem-run.txt)" >&2; break 2; fi; \
	  if [ $$rc = 137 ] || grep -q 'signal: killed' $(RESULTS)/mem-run.txt; then \
	    echo "kvbench: $$t was killed inside its $(MEM_LIMIT) budget: $${report:-its watcher left no report}" >&2; \
	  elif [ $$rc = 124 ]; then \
	    echo "kvbench: $$t did not finish a round in $(MEM_TIMEOUT) s inside its $(MEM_LIMIT) budget; stopped (MEM_TIMEOUT): $${report:-its watcher left no report}" >&2; \
	  elif [ $$rc != 0 ]; then cat $(RESULTS)/mem-run.txt >&2; exit $$rc; fi; \
	  done; \
	  done; \
	done; rm -f $(RESULTS)/mem-run.txt $(RESULTS)/mem-rc

# Build tags select files in internal/engine only, so the tagged variants
# are checked there. No tracked file may be a compiled one (ELF, Mach-O,
# PE, an ar archive): build outputs are ignored (.gitignore), never added.
vet:
	@bad=; while IFS= read -r -d '' f; do \
	  [ -f "$$f" ] || continue; \
	  case $$(head -c 4 -- "$$f" | od -An -tx1 | tr -d ' \n') in \
	    7f454c46|cffaedfe|cefaedfe|feedfacf|feedface|cafebabe|213c6172|4d5a*) bad="$$bad $$f" ;; \
	  esac; \
	done < <(git ls-files -z); \
	if [ -n "$$bad" ]; then echo "vet: tracked compiled files (remove them with git rm --cached; build outputs are not part of the source):$$bad" >&2; exit 1; fi
	$(GO) vet ./...
	$(if $(ROCKSDB),$(GO) vet -tags rocksdb ./internal/engine)
	$(GO) vet -tags lmdb_bmatsuo ./internal/engine
	$(GO) vet -tags kvbench_slowdown ./internal/engine
	$(GO) run $(STATICCHECK) ./...
	$(if $(ROCKSDB),$(GO) run $(STATICCHECK) -tags rocksdb ./internal/engine)

# unit: unit and conformance tests under the race detector, and what runs
# without it: once per build variant (RocksDB compiled in, its damaged
# fixtures too; LMDB on bmatsuo/lmdb-go) and what -race cannot run or runs
# too slowly. Two jobs side by side: unit-race, every package under -race
# but the longest tests of internal/workload, its longest package, which
# would otherwise run alone at the end; unit-side, those tests (the same
# race-built test binary), then the runs without -race (alone: 79 s and
# 44 s before these moved to unit-side's end). Lines of the two
# jobs interleave. The variants also count, under callgrind, that each
# engine's point read calls the engine's own Get (docs/gating.md).
# GORACE: a race-built process sleeps a second at exit by default, and the
# cold-start and twin tests start many of them.
UNIT_FIRST = ./internal/workload/... ./benchstat/history
UNIT_SIDE  = ^(TestCallsReadTheirOwnKeys|TestTwinRunsWhereBoltRuns|TestYCSBMixes|TestReadRandomPercentilesMatchInjectedDelays)$$
# The history report's change-point tests: thousands of shuffles in one
# goroutine (the report starts none), ten times slower under -race.
UNIT_PLAIN = ^(TestReport|TestSharedSlowdownShowsAsRunDrift)$$
RACE       = GORACE=atexit_sleep_ms=0 KVBENCH_CHROMIUM=skip $(GO) test -race -count 1
unit:
	@$(MAKE) --no-print-directory -j2 --output-sync=line unit-race unit-side

unit-race:
	$(RACE) -skip '$(UNIT_SIDE)|$(UNIT_PLAIN)|^TestE2E' $(UNIT_FIRST) ./internal/... ./benchstat/...

unit-side:
	$(RACE) -run '$(UNIT_SIDE)' ./internal/workload
	$(GO) test -count 1 -run '$(UNIT_PLAIN)' ./benchstat/history
	$(GO) test -count 1 -run 'TestNoiseOnlyPasses|TestSlowdownsAreCaught' ./benchstat/internal/gate # simulations, too slow under -race
	$(GO) test -count 1 ./internal/valgrind ./internal/spin # under callgrind, which a -race binary cannot run
	$(if $(ROCKSDB),$(GO) test -count 1 -tags '$(TAGS)' ./internal/engine)
	$(if $(ROCKSDB),$(GO) test -count 1 -tags '$(TAGS)' -run 'TestDamagedFixtureIsRebuilt|TestBudgetRuleReachesEveryLSM' ./internal/core)
	$(GO) test -count 1 ./benchstat/internal/changepoint # thousands of shuffles, single-threaded: too slow under -race
	$(GO) test -count 1 -tags lmdb_bmatsuo ./internal/engine

# smoke: every test of the main package, with every benchmark once on a
# tiny data set: the flags below, in TestEveryBenchmarkWritesOnlyUnderDir's
# child, which also checks that nothing is written outside -dir (SMOKE_V=-v
# prints its results). That child runs outside the module, where the
# minimal cold-start child cannot be built, so the cold start also runs
# here. make bench with a missing DIR must stop with the suite's own error
# (docs/reliability.md).
SMOKE_V ?=
# Two jobs side by side: the main package's tests (child processes that
# wait on timers and the disk) and the rest (make bench's error path, the
# memory budget's path, the gate's A/A comparisons).
smoke:
	@$(MAKE) --no-print-directory -j2 --output-sync=target smoke-tests smoke-paths

smoke-tests:
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	set -o pipefail; \
	$(GO) test -count 1 -tags '$(TAGS)' $(SMOKE_V) -run . -bench '^BenchmarkEmbedColdStart$$' -benchtime 1x -keys_mil 0.002 -valsz 256 -threads 1,4 -hit_rate 0,0.63,1 -prefetch_traces 2 -embed_records 2000 -dir "$$d" \
	  $(LOAD_SMOKE) .

smoke-paths:
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	if out=$$($(MAKE) --no-print-directory bench-run TAGS='$(TAGS)' KEYS_MIL=0.002 COUNT=1 RESULTS="$$d" DIR="$$d/missing" 2>&1) || \
	  ! grep -q -- "-dir $$d/missing: does not exist" <<<"$$out"; then \
	  echo "make bench with a missing DIR did not stop with the suite's error:"; echo "$$out"; exit 1; fi # errors reach the user
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	$(MAKE) --no-print-directory bench-mem TAGS='$(TAGS)' KEYS_MIL=0.002 VALSZ=256 MEM_LIMIT=24MiB MEM_BENCHTIME=100x COUNT=1 RESULTS="$$d/results" DIR="$$d" # the memory budget's path
	@$(MAKE) --no-print-directory gate-smoke

# test: every step timed, and the times printed slowest first at the end
# (each package's own time is on its "ok" line above).
# Without RocksDB's headers (TAGS empty: deps could not install them, or
# TAGS= on the command line) every step runs without it, and one line says
# so.
TEST_STEPS = vet unit smoke report-test
test: export HISTORY := off
test: DEPS_QUIET := 1
test: deps valgrind-deps
	@$(if $(ROCKSDB),,echo "kvbench: RocksDB skipped: $(if $(wildcard /usr/include/rocksdb/c.h),TAGS leaves it out,its headers are missing (sudo apt-get install librocksdb-dev)); every other test runs" >&2)
	@times=; for s in $(TEST_STEPS); do \
	  t0=$$(date +%s.%N); $(MAKE) --no-print-directory $$s || exit 1; \
	  times="$$times$$(printf '%6.1f s  make %s' $$(awk "BEGIN { print $$(date +%s.%N) - $$t0 }") $$s)\n"; \
	done; \
	echo "== make test: where the time went =="; printf "$$times" | sort -rn

# prefetch: seed 000's prefix lookups on every engine, one sweep over every
# trace ID per run (docs/seed-000.md); PREFETCH_TRACES=9000 is the seed's
# full size (~2 GB per engine; no test timeout, it runs long).
PREFETCH_TRACES ?= 600
prefetch: deps
	@mkdir -p $(RESULTS)
	$(MAKE) --no-print-directory prefetch-run TAGS="$(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)"

prefetch-run:
	$(GO) test -tags '$(TAGS)' -run '^$$' -timeout 0 -bench 'BenchmarkPrefetch/^(prefetch|hit)=' -benchtime $(PREFETCH_TRACES)x -count $(COUNT) \
	  -prefetch_traces $(PREFETCH_TRACES) $(if $(DIR),-dir $(DIR)) | tee $(RESULTS)/prefetch.txt
	$(GO) test -tags '$(TAGS)' -run '^$$' -timeout 0 -bench 'BenchmarkPrefetch/^open-only' -benchtime 5x -count $(COUNT) \
	  -prefetch_traces $(PREFETCH_TRACES) $(if $(DIR),-dir $(DIR)) | tee -a $(RESULTS)/prefetch.txt
	@echo "== Badger with values in the value log, the seed's layout ==" >&2
	$(GO) test -tags '$(TAGS)' -run '^$$' -timeout 0 -bench 'BenchmarkPrefetchBadger/^(prefetch|hit)=' -benchtime $(PREFETCH_TRACES)x -count $(COUNT) \
	  -prefetch_traces $(PREFETCH_TRACES) -badger_vthreshold 1024 $(if $(DIR),-dir $(DIR)) | tee $(RESULTS)/prefetch-badger-vlog.txt
	$(call record,$(RESULTS)/prefetch.txt $(RESULTS)/prefetch-badger-vlog.txt,prefetch)

# embed-data writes a cdb of RECORDS records that the next build of the
# test binary embeds instead of testdata/embed-committed.cdb (seed 004:
# RECORDS=20000000 is the seed's 1.9 GB), and EMBED_OVERLAY, which leaves
# the committed cdb out of a build that passes it (-overlay): the glob
# embeds both otherwise, and at 20M records the 9.4 MB more passes the Go
# linker's 2e9-byte limit. embed-clean goes back.
RECORDS ?=
EMBED_OVERLAY = testdata/embed-generated.overlay.json
embed-data:
	@test -n "$(RECORDS)" || { echo "embed-data: say how many records, e.g. make embed-data RECORDS=20000000" >&2; exit 2; }
	$(GO) run ./internal/records/cmd/embed-data -records $(RECORDS) -out testdata/embed-generated.cdb
	@printf '{"Replace":{"%s":""}}\n' "$(CURDIR)/testdata/embed-committed.cdb" > $(EMBED_OVERLAY)
	@echo "embed-data: build with -overlay $(EMBED_OVERLAY) to leave the committed cdb out (needed past ~19.9M records)" >&2

embed-clean:
	rm -f testdata/embed-generated.cdb $(EMBED_OVERLAY)

# memfloor: each engine's memory floor (kvb memfloor): the smallest
# -mem_limit, in whole MiB, in which it populates each shape (keys_mil x
# valsz) within MEMFLOOR_MULTIPLE of its time in a budget of twice the
# data, every run under the one budget rule; then random reads in that
# budget beside the disk's. Results in $(RESULTS)/memfloor.txt (benchstat
# format), progress and a Markdown table on stderr.
MEMFLOOR_SHAPES     ?= 0.1x1024,0.25x128
MEMFLOOR_ENGINES    ?=
MEMFLOOR_MULTIPLE   ?= 3
MEMFLOOR_RESOLUTION ?= 10%
MEMFLOOR_FLAGS      ?=
memfloor: deps
	@mkdir -p $(RESULTS)
	$(MAKE) --no-print-directory memfloor-run TAGS="$(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)"

memfloor-run: bench-bin
	$(GO) run ./benchstat/kvb memfloor -bin $(BENCH_BIN) -shapes '$(MEMFLOOR_SHAPES)' $(if $(MEMFLOOR_ENGINES),-engines '$(MEMFLOOR_ENGINES)') \
	  -multiple $(MEMFLOOR_MULTIPLE) -resolution '$(MEMFLOOR_RESOLUTION)' $(if $(DIR),-dir $(DIR)) \
	  -o $(RESULTS)/memfloor.txt $(if $(MEMFLOOR_FLAGS),-- $(MEMFLOOR_FLAGS))
	$(call record,$(RESULTS)/memfloor.txt,memfloor)

# seed004: seed 004's benchmarks (docs/seed-004.md): every source of the
# records the test binary embeds (testdata/embed-committed.cdb, or what
# make embed-data wrote): build, reads in order and at random, and one
# read from a fresh process. Results in $(RESULTS)/embed.txt.
seed004: deps
	@mkdir -p $(RESULTS)
	$(GO) test -tags '$(TAGS)' $(if $(wildcard $(EMBED_OVERLAY)),-overlay $(EMBED_OVERLAY)) -run '^$$' -timeout 0 -bench BenchmarkEmbed -count $(COUNT) $(if $(DIR),-dir $(DIR)) | tee $(RESULTS)/embed.txt
	$(call record,$(RESULTS)/embed.txt,seed004)

# Short windows and few tables keep the fixed-rate, knee, HTTP and Bloom
# benchmarks to seconds in smoke.
LOAD_SMOKE = -load_time 50ms -knee_time 20ms -knee_max_time 20ms -knee_steps 1 -rate 2000 -write_rate 200 -sst_tables 4

# seed003: seed 003's experiments (docs/seed-003.md): fixed-rate workloads
# and the knee of every engine, Bloom filters over 100 unmerged tables, and
# the HTTP service, with full latency spectra in $(RESULTS)/hgrm.
seed003: deps
	@mkdir -p $(RESULTS)/hgrm
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench 'BenchmarkLoad' -benchtime 1x -count $(COUNT) -rate 10000 \
	  $(BENCH_FLAGS) | tee $(RESULTS)/load.txt
	@# Each upsert search on a fresh copy of the fixture (docs/methodology.md,
	@# "The knee"); an LSM's upsert search takes about 5 minutes, so no test
	@# timeout.
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench 'BenchmarkKnee' -benchtime 1x -count $(COUNT) -timeout 0 $(BENCH_FLAGS) | tee $(RESULTS)/knee.txt
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench 'BenchmarkBloom' -benchtime 1x -count $(COUNT) -rate 5000,20000 \
	  $(BENCH_FLAGS) -latency_dir $(RESULTS)/hgrm | tee $(RESULTS)/bloom.txt
	$(GO) test -tags '$(TAGS)' -run '^$$' -bench 'BenchmarkHTTP' -benchtime 1x -count $(COUNT) -rate 5000,20000 \
	  $(BENCH_FLAGS) -latency_dir $(RESULTS)/hgrm | tee $(RESULTS)/http.txt
	$(call record,$(RESULTS)/load.txt $(RESULTS)/knee.txt $(RESULTS)/bloom.txt $(RESULTS)/http.txt,seed003)

# Regression gate and charts (benchstat/, docs/gating.md).
ACTIONLINT ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.7
.PHONY: gate-smoke gate-e2e gate-sim-power charts versions

# gate-smoke: both workflows pass actionlint; too few rounds is refused
# before any build; an A/A comparison of this tree's test binary with
# itself (the fewest rounds the gate accepts under Holm, tiny data) gives a
# verdict in time mode (not asserted: make smoke runs it beside the main
# package's tests, and times on a shared machine are no pass/fail test)
# and, where Valgrind is installed, passes in sim mode (instruction counts).
# It checks kvb compare's plumbing (the gate's own error rates, and
# building git refs and engine modules, are gate-e2e's and power's).
gate-smoke:
	$(GO) run $(ACTIONLINT) .github/workflows/bench.yml .github/workflows/engine-gate.yml
	@d=$$(mktemp -d); trap 'rm -rf "$$d"' EXIT; \
	$(GO) build -o "$$d/kvb" ./benchstat/kvb || exit 1; \
	"$$d/kvb" compare HEAD HEAD -count 3 >/dev/null 2>&1; test $$? = 2 || { echo "gate-smoke: kvb compare -count 3 was not refused" >&2; exit 1; }; \
	$(GO) test -c -tags '$(TAGS)' -o "$$d/kvbench.test" . && \
	"$$d/kvb" compare "$$d/kvbench.test" "$$d/kvbench.test" -no-history -count 8 -threshold 25 -bench 'BenchmarkReadRandom(Bolt|Memory)' -benchtime 1000x \
	  -keys_mil 0.002 -valsz 256 -dir "$$d" -o "$$d/out" >"$$d/log" 2>&1; rc=$$?; \
	[ $$rc -le 1 ] && grep -q '^### kvbench gate: \(pass\|FAIL\)' "$$d/out/gate.md" || { cat "$$d/log"; exit 1; }; \
	echo "time mode (a verdict, not asserted: times on a shared machine): $$(head -1 "$$d/out/gate.md")"; \
	if ! command -v valgrind >/dev/null; then echo "gate-smoke: sim mode skipped: valgrind is not installed (make valgrind-deps)"; exit 0; fi; \
	"$$d/kvb" compare "$$d/kvbench.test" "$$d/kvbench.test" -no-history -mode sim -count 6 -bench 'BenchmarkReadRandomBolt' -sim_benchtime 1000x \
	  -keys_mil 0.002 -valsz 256 -dir "$$d" -o "$$d/sim" >"$$d/log" 2>&1 || { cat "$$d/log"; exit 1; }; \
	grep -q '| sim | `ReadRandomBolt/.*| instr/op |' "$$d/sim/gate.md" && grep -q '| sim | `ReadRandomBolt/.*| est-cycles/op |' "$$d/sim/gate.md" || \
	  { echo "gate-smoke: sim mode gated no instr/op or est-cycles/op:"; cat "$$d/sim/gate.md"; exit 1; }; \
	echo "sim mode: $$(head -1 "$$d/sim/gate.md")"

# gate-e2e: a commit that makes Bolt's reads do four times the lookups
# (built in a temporary worktree, never on a branch) fails the gate, so
# does a local copy of bbolt with an extra lookup per Get against v1.5.0
# (kvb compare -module), and an unmodified copy passes; make versions on two
# bbolt releases writes both files and records both. Then the gate's
# error rates on this machine (kvb power, 36 min in all: docs/targets.md): GATE_AA
# A/A comparisons and GATE_RUNS per injected slowdown, at kvb compare's
# defaults on the default data set; the table and chart of docs/gating.md
# are written to $(RESULTS)/power and docs/img/gate-power.svg.
GATE_AA ?= 20
GATE_RUNS ?= 10
gate-e2e: export HISTORY := off
gate-e2e: deps
	KVBENCH_E2E=full $(GO) test -count 1 -timeout 0 -v ./benchstat
	$(GO) run ./benchstat/kvb power -aa $(GATE_AA) -runs $(GATE_RUNS) -o $(RESULTS)/power -- $(if $(DIR),-dir $(DIR))
	cp $(RESULTS)/power/power.svg docs/img/gate-power.svg

# gate-sim-power: the gate's error rates in simulation mode (kvb compare
# -mode sim, docs/gating.md "Simulation mode"): GATE_AA A/A comparisons of
# every engine's warm ReadRandom and Scan, and GATE_RUNS comparisons with
# every engine's reads 1% more instructions, then the spread, threshold
# and injected-slowdown tables, into $(RESULTS)/power-sim (90 min: docs/targets.md).
SIM_ENGINES = (Badger|Bolt|Lmdb|Pebble|RocksDB)$$
gate-sim-power: deps valgrind-deps
	$(GO) run ./benchstat/kvb power -mode sim -aa $(GATE_AA) -slowdowns 1:$(GATE_RUNS) -slowed_bench 'BenchmarkReadRandom$(SIM_ENGINES)' \
	  -o $(RESULTS)/power-sim -- -bench 'BenchmarkReadRandom$(SIM_ENGINES)|BenchmarkScan$(SIM_ENGINES)' $(if $(DIR),-dir $(DIR))

# versions: the release matrix (docs/history.md, "Release matrix"): this
# tree's suite against each of VERSIONS of the engine module MODULE
# (make versions MODULE=go.etcd.io/bbolt VERSIONS="v1.4.3 v1.5.0"), built
# as kvb compare -module builds a side; a version the suite does not
# compile against stops it before anything runs. Warm random reads and a
# populate of the engines MODULE backs, in interleaved rounds, into
# $(RESULTS)/versions/<version>.txt, benchstat's table across them, and
# each version recorded in the history store (series=release) unless
# HISTORY=off. VERSIONS_FLAGS: more kvb versions flags (-count, -bench,
# -benchtime, -keys_mil, -dir, -build_only, -no-history, ...).
MODULE   ?=
VERSIONS ?=
VERSIONS_FLAGS ?=
versions: deps
	$(GO) run ./benchstat/kvb versions -module '$(MODULE)' $(VERSIONS) -tags '$(TAGS)' -o $(RESULTS)/versions $(VERSIONS_FLAGS)

# charts: SVG charts of a results file into docs/img (make charts FILE=results/bench.txt).
charts:
	@test -n "$(FILE)" || { echo "usage: make charts FILE=results.txt" >&2; exit 2; }
	$(GO) run ./benchstat/kvb charts -o docs/img $(FILE)
