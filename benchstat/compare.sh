#!/usr/bin/env bash
# compare.sh BASE HEAD [-bench REGEX] [-count N] [-o DIR] [flags...]
#
# Builds the test binaries of two git refs once, runs them interleaved
# (base, head, base, head, ... N rounds) on the same fixtures (one per
# engine version) under the same -dir, writes DIR/base.txt and DIR/head.txt, prints benchstat's comparison
# and runs the regression gate (benchstat/gate). Exits with the gate's
# status: 0 pass, 1 regression, 2 usage or build error.
#
# Other flags go to both binaries: suite flags as they are (-dir, -keys_mil,
# -threads, ...), go test flags by their usual names (-benchtime, -cpu,
# -benchmem, -timeout). Gate flags: -alpha, -threshold, -holm, -units.
# Only committed code is compared: refs are checked out into temporary
# worktrees, removed on exit.
set -euo pipefail

usage() {
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[[ $# -ge 2 ]] || usage
base_ref=$1 head_ref=$2
shift 2

bench='BenchmarkReadRandom'
count=10
out=results/compare
# Defaults; a later copy of a flag overrides them (the flag package keeps
# the last value).
bench_args=(-threads 1 -test.benchtime 0.5s)
# Units gated by default: tail percentiles (p99-ns and up) of a shared
# machine swing with other processes' scheduling and failed A/A runs
# (docs/gating.md); ops/s, MB/s and keys/s repeat ns/op. -units . gates all.
units='^(ns/op|cpu-ns/op|p50-ns|B/op|allocs/op|read-B/op|write-amp|space-amp)$'
gate_args=()
stat_args=(-table= -ignore dir-fs)
while [[ $# -gt 0 ]]; do
	f=$1
	[[ $f == --* ]] && f=${f#-}
	case $f in
	-h | -help) usage ;;
	-bench=* | -count=* | -o=* | -alpha=* | -threshold=* | -units=*) set -- "${f%%=*}" "${f#*=}" "${@:2}"; continue ;;
	esac
	case $f in
	-bench) bench=${2:?-bench needs a regular expression}; shift 2 ;;
	-count)
		count=${2:-}
		[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: -count ${count}: must be a whole number of rounds, at least 1" >&2; exit 2; }
		shift 2 ;;
	-o) out=${2:?-o needs a directory}; shift 2 ;;
	-alpha) gate_args+=(-alpha "${2:?-alpha needs a value}"); stat_args+=(-alpha "$2"); shift 2 ;;
	-threshold) gate_args+=(-threshold "${2:?-threshold needs a value}"); shift 2 ;;
	-units) units=${2:?-units needs a regular expression}; shift 2 ;;
	-holm) gate_args+=(-holm); shift ;;
	-benchtime | -cpu | -timeout) bench_args+=("-test.${f#-}" "${2:?$f needs a value}"); shift 2 ;;
	-benchtime=* | -cpu=* | -timeout=*) bench_args+=("-test.${f#-}"); shift ;;
	-benchmem | -short | -v) bench_args+=("-test.${f#-}"); shift ;;
	*) bench_args+=("$1"); shift ;;
	esac
done
out=$(realpath -m -- "$out")
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
base_sha=$(git rev-parse --verify --quiet "${base_ref}^{commit}") || { echo "compare.sh: BASE $base_ref: not a commit in $repo" >&2; exit 2; }
head_sha=$(git rev-parse --verify --quiet "${head_ref}^{commit}") || { echo "compare.sh: HEAD $head_ref: not a commit in $repo" >&2; exit 2; }

# The same build tags as the Makefile: RocksDB when its headers are there.
tags=${TAGS-$(test -f /usr/include/rocksdb/c.h && echo rocksdb || true)}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvbench-compare.XXXXXX")
worktrees=()
cleanup() {
	for w in "${worktrees[@]}"; do git -C "$repo" worktree remove --force "$w" 2>/dev/null || true; done
	rm -rf "$tmp"
	git -C "$repo" worktree prune 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build() { # build NAME SHA: a test binary of SHA at $tmp/NAME.test
	local wt=$tmp/$1
	git -C "$repo" worktree add --quiet --detach "$wt" "$2"
	worktrees+=("$wt")
	echo "compare.sh: building $1 ($(git -C "$repo" log -1 --format='%h %s' "$2"))" >&2
	(cd "$wt" && go test -c -tags "$tags" -o "$tmp/$1.test" .)
}
build base "$base_sha" || exit 2
if [[ $head_sha == "$base_sha" ]]; then
	cp "$tmp/base.test" "$tmp/head.test" # an A/A run: the same code on both sides
else
	build head "$head_sha" || exit 2
fi
go build -o "$tmp/gate" ./benchstat/gate || exit 2

mkdir -p "$out"
: >"$out/base.txt"
: >"$out/head.txt"
run() { # run SIDE [extra test flags]: one round of SIDE's binary
	local side=$1
	shift
	"$tmp/$side.test" -test.run '^$' -test.bench "$bench" -test.count 1 "${bench_args[@]}" "$@"
}
# Build or reuse each side's fixtures before anything is timed; they are
# keyed by the data, the options that shape files and the engine version,
# so both sides share them unless one side changed an engine's version.
for side in base head; do
	run "$side" -test.benchtime 1x >"$tmp/warmup-$side.txt" || {
		grep -v '^settings-' "$tmp/warmup-$side.txt" | tail -20 >&2
		echo "compare.sh: $side fails" >&2
		exit 2
	}
done
for ((i = 1; i <= count; i++)); do
	echo "compare.sh: round $i of $count" >&2
	for side in base head; do
		run "$side" >>"$out/$side.txt" || { echo "compare.sh: $side fails in round $i; its output is in $out/$side.txt" >&2; exit 2; }
	done
done

echo "compare.sh: base $base_ref ($base_sha), head $head_ref ($head_sha), $count rounds, -bench '$bench' ${bench_args[*]}" | tee "$out/benchstat.txt"
# One table per unit: settings-<engine> lines differ between engines and
# would otherwise split every table; free space on -dir changes every run.
go tool benchstat "${stat_args[@]}" "$out/base.txt" "$out/head.txt" | tee -a "$out/benchstat.txt"
echo
set +e
"$tmp/gate" -units "$units" "${gate_args[@]}" "$out/base.txt" "$out/head.txt" >"$out/gate.md"
status=$?
set -e
cat "$out/gate.md"
exit "$status"
