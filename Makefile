# kvbench: `make bench` is the main job, `make test` runs every test.
# Both install what they need (Debian's librocksdb-dev) first.
# Most targets are one call of the suite's program, benchstat/kvb, with
# the variables below as its flags (go run ./benchstat/kvb help COMMAND
# says what each does); docs/targets.md names the others. The steps
# themselves are Go (docs/architecture.md).

GO       ?= go
export GO
# -trimpath: built without the checkout's path, so a second clone reuses
# the first's build of it; without DWARF, which only a debugger reads, and
# cgo's C without -g (KVB_CGO: Go's default -O2 alone, unless CGO_CFLAGS
# is set; the same machine code; kvb test's testCFlags): kvb test builds everything so, and its
# tests' own builds of kvb then find this one in the cache. kvb itself
# runs with CGO_CFLAGS as it was (-exec), so that make bench's test binary
# is built as a go test by hand builds it.
KVB_CGO   = $(or $(CGO_CFLAGS),-O2)
KVB       = CGO_CFLAGS='$(KVB_CGO)' $(GO) run -exec "env 'CGO_CFLAGS=$(CGO_CFLAGS)'" -trimpath -gcflags=all=-dwarf=false -ldflags=-w ./benchstat/kvb
# The lab's kvb (benchstat/lab, a module of its own: power, audit,
# memfloor, spectrum, history, record, screenshot), built by make lab-kvb
# and run from here.
LAB_KVB   = $(RESULTS)/kvb-lab
# RocksDB is compiled in when its headers are present (see `deps`).
TAGS     ?= $(shell test -f /usr/include/rocksdb/c.h && echo rocksdb)
# The default run: a small data set that fits a laptop and a CI machine.
KEYS_MIL ?= 0.1
VALSZ    ?= 1024
# THREADS: goroutines of the warm reads, the last of them the mixes'; OVERSUB: the warm
# reads' oversubscribed row (docs/methodology.md, "The scheduler's
# wait"). Unset, kvb bench takes one and one per CPU of the machine at
# hand, and 8× the CPUs.
THREADS  ?=
OVERSUB  ?=
DIR      ?=
RESULTS  ?= results
# The LSMs' data block sizes of make bench's point-read, scan and budget
# rows: both sides of the trade (docs/engines.md, "Data block size").
BLOCKS   ?= 4KiB,32KiB

.PHONY: all deps valgrind-deps report-deps bench bench-full bench-mem bench-scale bench-sim prefetch seed003 seed004 audit memfloor lab-kvb lab-test history-record \
	summary report report-screenshot history-screenshot embed-data embed-clean \
	test vet unit unit-race unit-race-workload unit-side smoke smoke-tests smoke-paths e2e e2e-sim gate-smoke report-test gate-e2e gate-sim-power versions charts

all: test

# opt,VAR,flag: -flag and VAR's value when VAR is set, else kvb's default.
opt = $(if $($(1)),-$(2) '$($(1))')

# deps installs Debian's RocksDB library when missing; without root or
# sudo the suite runs without RocksDB (make test says so once, itself:
# DEPS_QUIET). valgrind-deps: valgrind (the gate's instruction counts,
# internal/valgrind's test), report-deps: chromium (the report's browser
# test); without them the tests that need valgrind skip, report-test fails.
deps:
	@$(KVB) deps $(if $(DEPS_QUIET),-quiet) rocksdb
valgrind-deps:
	@$(KVB) deps valgrind
report-deps:
	@$(KVB) deps chromium

# bench: the main job, sized to answer seven questions in minutes
# (docs/benchmarks.md, "What make bench measures"): write throughput and
# amplification (populate, sync off, and the steady state of an
# overwrite); warm point reads at 1 and N threads; point reads in a
# memory budget, uniform and Zipfian, beside the disk's own 4 KiB
# random-read rate; mixed reads and writes under skew (YCSB A and C);
# durable commits of one key from 1 and 8N writers; range scans (seek and read 100); open time (cold). The point-read,
# budget and scan rows run the LSMs at each of BLOCKS. One test binary
# runs every step; raw results go to $(RESULTS)/bench.txt, then the
# summary ($(RESULTS)/summary.txt) and the report page
# ($(RESULTS)/report.html). The rows are a table in
# benchstat/kvb/benchrows.go.
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
# the next. YCSB A and the overwrite pass also write their throughput over
# time into $(RESULTS)/timeline (docs/methodology.md, "Throughput over
# time"): YCSB A in 25 ms intervals, YCSB_BENCHTIME operations a round
# so that the fastest engine's window holds the five intervals stall%
# needs (60,000: Pebble's 0.3-0.4 s here); the overwrite pass, a commit of
# 1,000 keys at a time, in 500 ms.
YCSB_BENCHTIME ?= 60000x
YCSB_BLOCK     ?= 4KiB
OVERWRITE_PASS ?= 2
OVERWRITE_MEMTABLE ?= 4
OPEN_BENCHTIME ?= 10x
# The commit row: durable commits of one key (BenchmarkCommit) from 1 and
# 8× the CPUs' writers, COMMIT_BENCHTIME commits a round, each round on a
# fresh copy of the fixture; their rate over time in 20 ms intervals.
COMMIT_BENCHTIME ?= 200x
MEM_COUNT ?= 1
BENCH_BIN  = $(RESULTS)/kvbench.test

# bench-mem: the memory-limited row (docs/methodology.md, "A memory
# budget"): the same data set in a budget of a quarter of it, readahead
# off; random reads (one thread, all hits, steady state after a warm-up
# pass) and populate (sync off), each round a process of its own (an
# engine its budget kills costs no other result; so does a round that
# does not finish in MEM_TIMEOUT seconds), added to $(RESULTS)/bench.txt.
# make bench runs it for reads at BENCHTIME and BLOCKS, uniform and
# Zipfian, MEM_COUNT rounds; bench-full at FULL_COUNT rounds and BLOCKS.
MEM_LIMIT ?= 26MiB
MEM_BENCHTIME ?= 1s
MEM_TIMEOUT ?= 180
MEM_WORKLOADS ?= readrandom populate
# MEM_DIST: the reads' key distributions (-dist); empty is uniform.
MEM_DIST ?=
# MEM_BLOCKS: the LSMs' block sizes (-block_size) of make bench-mem, each
# in processes of its own like every round; empty runs the suite's default.
MEM_BLOCKS ?=
# bench-full: every benchmark of both steps (populate with sync on and
# off; reads warm and cold at every -hit_rate and -threads; full scans,
# seek-and-scan, open warm and cold, every disk figure; the harness alone),
# and the memory-limited row for MEM_WORKLOADS, at 1 s per benchmark.
FULL_COUNT ?= 3
# bench-sim: the instruction counts of make bench's warm point reads and
# scans on one thread (kvb sim under Valgrind's callgrind: instr/op
# and est-cycles/op of each timed loop), for a history that sees small
# changes: make bench's times resolve steps of 10-20 % on a shared VM,
# the counts about 1 % (docs/history.md, "Change points"). Each count is a
# process of its own. Results in $(RESULTS)/bench-sim.txt. Needs valgrind
# (valgrind-deps installs it).
SIM_COUNT     ?= 3
SIM_BENCHTIME ?= 2000x,Scan=50x
# prefetch: seed 000's prefix lookups on every engine, one sweep over every
# trace ID per run (docs/seed-000.md); PREFETCH_TRACES=9000 is the seed's
# full size (~2 GB per engine; no test timeout, it runs long).
PREFETCH_TRACES ?= 600
# seed003: seed 003's experiments (docs/seed-003.md): fixed-rate workloads
# and the knee of every engine, Bloom filters over 100 unmerged tables, and
# the HTTP service, with full latency spectra in $(RESULTS)/hgrm.
# seed004: seed 004's benchmarks (docs/seed-004.md): every source of the
# records the test binary embeds (testdata/embed-committed.cdb, or what
# make embed-data wrote). Results in $(RESULTS)/embed.txt.
DATA_FLAGS  = -keys_mil $(KEYS_MIL) -valsz $(VALSZ) $(if $(DIR),-dir '$(DIR)')
RUN_FLAGS   = -tags '$(TAGS)' -results '$(RESULTS)' $(DATA_FLAGS)
BENCH_FLAGS = $(RUN_FLAGS) -benchtime $(BENCHTIME) $(call opt,THREADS,threads) $(call opt,OVERSUB,oversub) -blocks $(BLOCKS) \
	-ycsb_benchtime $(YCSB_BENCHTIME) -ycsb_block $(YCSB_BLOCK) -overwrite_passes $(OVERWRITE_PASS) \
	-overwrite_memtable $(OVERWRITE_MEMTABLE) -open_benchtime $(OPEN_BENCHTIME) -commit_benchtime $(COMMIT_BENCHTIME) -mem_count $(MEM_COUNT) \
	-mem_limit $(MEM_LIMIT) -mem_benchtime $(MEM_BENCHTIME) -mem_timeout $(MEM_TIMEOUT) -mem_workloads '$(MEM_WORKLOADS)' \
	-mem_dist '$(MEM_DIST)' -mem_blocks '$(MEM_BLOCKS)' -sim_benchtime '$(SIM_BENCHTIME)' -prefetch_traces $(PREFETCH_TRACES)

bench: deps
	$(KVB) bench $(BENCH_FLAGS) -count $(COUNT)
bench-full: deps
	$(KVB) bench full $(BENCH_FLAGS) -count $(FULL_COUNT)
bench-mem:
	$(KVB) bench mem $(BENCH_FLAGS) -count $(COUNT)
# bench-scale: the main questions at your own size, e.g.
# make bench-scale KEYS_MIL=10 VALSZ=256 DIR=/mnt/data (docs/benchmarks.md,
# "At your own size"): warm reads, YCSB A and C, durable commits; one
# round each (SCALE_COUNT), reads 1 s a round.
SCALE_COUNT ?= 1
bench-scale: deps
	$(KVB) bench scale $(BENCH_FLAGS) -count $(SCALE_COUNT) -benchtime 1s
bench-sim: deps valgrind-deps
	$(KVB) bench sim $(BENCH_FLAGS) -count $(SIM_COUNT)
prefetch: deps
	$(KVB) bench prefetch $(BENCH_FLAGS) -count $(COUNT)
seed003: deps
	$(KVB) bench seed003 $(BENCH_FLAGS) -count $(COUNT)
seed004: deps
	$(KVB) bench seed004 $(BENCH_FLAGS) -count $(COUNT)

# The lab: the tools that study the suite itself rather than the engines
# (kvb power, audit, memfloor, spectrum, screenshot, the release matrix
# kvb versions, and the history store: kvb history, record), a module of
# its own under benchstat/lab that imports this one, so make test and
# make bench compile none of it (docs/architecture.md, "Two modules").
# lab-kvb builds its kvb as $(LAB_KVB), which audit, memfloor,
# history-record, gate-e2e, gate-sim-power, report-screenshot,
# history-screenshot and versions run from here; lab-test vets the lab
# and runs its tests.
lab-kvb:
	$(GO) build -C benchstat/lab -trimpath -o '$(abspath $(LAB_KVB))' ./kvb
lab-test:
	$(GO) vet -C benchstat/lab ./...
	$(GO) test -C benchstat/lab -count 1 ./...

# history-record: RECORD_FILES into the history store (docs/history.md),
# a run each, labelled role RECORD_ROLE and this checkout's commit, its
# date, the branch and whether tracked files differ, dated when the run
# wrote the file: after make bench, make history-record; after make
# memfloor, make history-record RECORD_ROLE=memfloor
# RECORD_FILES=$(RESULTS)/memfloor.txt.
RECORD_ROLE  ?= bench
RECORD_FILES ?= $(RESULTS)/bench.txt
history-record: lab-kvb
	$(LAB_KVB) record -role '$(RECORD_ROLE)' $(RECORD_FILES)

# audit: which engine settings decide a rank. make bench's rows (warm
# reads and scans, YCSB A and C, populate, overwrite, open) for every
# engine at the suite's settings and with each engine setting of
# benchstat/lab/audit/settings.go flipped, one process each, AUDIT_ROUNDS
# interleaved rounds; the table goes into docs/engines.md ("Rank-sensitivity
# audit"), the raw results to $(RESULTS)/audit. Time: docs/targets.md.
AUDIT_ROUNDS ?= 3
audit: deps lab-kvb
	$(KVB) build -tags '$(TAGS)' -o '$(BENCH_BIN)'
	$(LAB_KVB) audit -bin $(BENCH_BIN) -rounds $(AUDIT_ROUNDS) $(DATA_FLAGS) -o $(RESULTS)/audit -doc docs/engines.md

# memfloor: each engine's memory floor (the lab's kvb memfloor): the smallest
# -mem_limit, in whole MiB, in which it populates each shape (keys_mil x
# valsz) within MEMFLOOR_MULTIPLE of its time in a budget of twice the
# data, every run under the one budget rule; then random reads in that
# budget beside the disk's. Results in $(RESULTS)/memfloor.txt (benchstat
# format); progress and a Markdown table on stderr.
MEMFLOOR_SHAPES     ?= 0.1x1024,0.25x128
MEMFLOOR_ENGINES    ?=
MEMFLOOR_MULTIPLE   ?= 3
MEMFLOOR_RESOLUTION ?= 10%
MEMFLOOR_FLAGS      ?=
MEMFLOOR_ARGS = -bin $(BENCH_BIN) -shapes '$(MEMFLOOR_SHAPES)' $(if $(MEMFLOOR_ENGINES),-engines '$(MEMFLOOR_ENGINES)') \
	-multiple $(MEMFLOOR_MULTIPLE) -resolution '$(MEMFLOOR_RESOLUTION)' $(if $(DIR),-dir '$(DIR)') \
	-o $(RESULTS)/memfloor.txt $(if $(MEMFLOOR_FLAGS),-- $(MEMFLOOR_FLAGS))
memfloor: deps lab-kvb
	$(KVB) build -tags '$(TAGS)' -o '$(BENCH_BIN)'
	$(LAB_KVB) memfloor $(MEMFLOOR_ARGS)

# summary: the engines side by side, one section per question, from the
# raw results; printed and written to $(RESULTS)/summary.txt as printed.
# report: $(RESULTS)/report.html, one page with no outside references: the
# summary's tables, every chart inline (SVG), the run's configuration and
# each engine's settings.
SUMMARY_IN ?= $(RESULTS)/bench.txt
summary:
	@echo
	@$(KVB) summary -o $(RESULTS)/summary.txt $(SUMMARY_IN)
report:
	@$(KVB) report -o $(RESULTS)/report.html $(SUMMARY_IN)

# report-screenshot: docs/img/report.png, the page of the summary test's
# results file at a laptop's width, for the README. history-screenshot:
# docs/img/history.png, the history page of the history the lab's history
# tests (benchstat/lab/history) build from the summary test's results file
# (14 commits, a regression, an improvement, a newer Go, three bbolt
# releases). Both are the lab's kvb screenshot, in headless Chromium.
report-screenshot: report-deps lab-kvb
	$(LAB_KVB) screenshot report
history-screenshot: report-deps lab-kvb
	$(LAB_KVB) screenshot history

# embed-data writes a cdb of RECORDS records that the next build of the
# test binary embeds instead of testdata/embed-committed.cdb (seed 004:
# RECORDS=20000000 is the seed's 1.9 GB), and
# testdata/embed-generated.overlay.json, which leaves the committed cdb out
# of a build that passes it (-overlay). embed-clean goes back.
RECORDS ?=
embed-data:
	$(KVB) embed-data $(if $(RECORDS),-records $(RECORDS))
embed-clean:
	rm -f testdata/embed-generated.cdb testdata/embed-generated.overlay.json

# test: the steps' jobs in one pool, one more than the CPUs at a time, the longest
# first; each job's time printed slowest first at the end (each package's
# own time is on its "ok" line above).
# vet: go vet (and each build variant of internal/engine) and staticcheck.
# unit: unit and conformance tests (among them: no tracked file a compiled one) under
# the race detector, beside what runs without it (RocksDB compiled in, its
# damaged fixtures too, or without RocksDB the engines' point reads counted
# under callgrind; LMDB on bmatsuo/lmdb-go; the simulations and callgrind
# tests). smoke: every test of the main package, with every
# benchmark once on a tiny data set (SMOKE_V=-v prints its results), beside
# make bench's error path, the memory budget's path and gate-smoke (both
# workflows pass actionlint; the gate's end-to-end
# tests at their smallest size, docs/testing.md). report-test: the report page in headless Chromium.
# The steps are a table in benchstat/kvb/teststeps.go. Without RocksDB's
# headers (TAGS empty: deps could not install them, or TAGS= on the
# command line) every step runs without it, and one line says so.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.6.1
ACTIONLINT  ?= github.com/rhysd/actionlint/cmd/actionlint@v1.7.7
SMOKE_V     ?=
TEST_FLAGS   = -tags '$(TAGS)' $(if $(SMOKE_V),-v) -staticcheck $(STATICCHECK) -actionlint $(ACTIONLINT)
test: DEPS_QUIET := 1
test: deps valgrind-deps
	@$(KVB) test $(TEST_FLAGS) vet unit smoke report-test
vet unit unit-race unit-race-workload unit-side smoke smoke-tests smoke-paths e2e e2e-sim gate-smoke report-test:
	@$(KVB) test $(TEST_FLAGS) $@

# gate-e2e: the end-to-end tests at full size (KVBENCH_E2E=full): a commit
# that makes Bolt's reads do four times the lookups (built in a temporary
# worktree, never on a branch) fails the gate, so does a local copy of
# bbolt with an extra lookup per Get against v1.5.0 (kvb compare -module),
# in time and in sim mode, and an unmodified copy passes. Then the gate's
# error rates on this machine (the lab's kvb power, 31 min: docs/targets.md): GATE_AA
# A/A comparisons and GATE_RUNS per injected slowdown, at kvb compare's
# defaults on the default data set; the table and chart of docs/gating.md
# are written to $(RESULTS)/power and docs/img/gate-power.svg.
GATE_AA ?= 20
GATE_RUNS ?= 10
gate-e2e: deps lab-kvb
	KVBENCH_E2E=full $(GO) test -count 1 -timeout 0 -v ./benchstat
	$(LAB_KVB) power -aa $(GATE_AA) -runs $(GATE_RUNS) -o $(RESULTS)/power -- $(if $(DIR),-dir $(DIR))
	cp $(RESULTS)/power/power.svg docs/img/gate-power.svg

# gate-sim-power: the gate's error rates in simulation mode (the lab's kvb
# power through kvb compare -mode sim, docs/gating.md "Simulation mode"):
# GATE_AA A/A comparisons of every engine's (and the Memory rail's) warm
# ReadRandom and Scan, and GATE_RUNS comparisons with every one's reads 1%
# more instructions, then the spread, threshold and injected-slowdown
# tables, into $(RESULTS)/power-sim (docs/targets.md).
gate-sim-power: deps valgrind-deps lab-kvb
	$(LAB_KVB) power -mode sim -aa $(GATE_AA) -slowdowns 1:$(GATE_RUNS) -slowed_bench 'BenchmarkReadRandom' \
	  -o $(RESULTS)/power-sim -- -bench 'BenchmarkReadRandom|BenchmarkScan' $(if $(DIR),-dir $(DIR))

# versions: the release matrix (docs/history.md, "Release matrix"), the
# lab's kvb versions: this tree's suite against each of VERSIONS of the engine module MODULE
# (make versions MODULE=go.etcd.io/bbolt VERSIONS="v1.4.3 v1.5.0"), built
# as kvb compare -module builds a side; a version the suite does not
# compile against stops it before anything runs. Warm random reads and a
# populate of the engines MODULE backs, in interleaved rounds, into
# $(RESULTS)/versions/<version>.txt, each labelled a point of the module's
# release series (series: release), and benchstat's table across them.
# VERSIONS_FLAGS: more kvb versions flags (-count, -bench, -benchtime,
# -keys_mil, -dir, -build_only, ...).
MODULE   ?=
VERSIONS ?=
VERSIONS_FLAGS ?=
versions: deps lab-kvb
	$(LAB_KVB) versions -module '$(MODULE)' $(VERSIONS) -tags '$(TAGS)' -o $(RESULTS)/versions $(VERSIONS_FLAGS)

# charts: SVG charts of a results file into docs/img (make charts FILE=results/bench.txt).
charts:
	$(if $(FILE),,$(error usage: make charts FILE=results.txt))$(KVB) charts -o docs/img $(FILE)
