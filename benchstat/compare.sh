#!/usr/bin/env bash
# compare.sh [-module MODULE] BASE HEAD [-mode time|sim|both] [-bench REGEX] [-count N] [-o DIR] [flags...]
#
# Builds two test binaries once, runs them in paired rounds on the same
# fixtures under the same -dir, in alternating order (base then head in odd
# rounds, head then base in even ones, so a drift within a round lands on
# both sides alike), writes DIR/base.txt and DIR/head.txt, prints
# benchstat's comparison and runs the regression gate (benchstat/gate) on
# the per-round pairs. Exits with the gate's status: 0 pass, 1 regression
# or a gated series missing from head, 2 usage or build error.
#
# BASE and HEAD are git refs of this repository (only committed code is
# compared), or test binaries already built (files). With -module MODULE,
# the suite is this repository's HEAD commit on both sides and BASE and
# HEAD are versions of the engine module MODULE (v1.4.0) or directories
# holding a copy of it (../bbolt): each side is built with the module
# replaced, and reads fixtures its own version wrote.
#
# Other flags go to both binaries: suite flags as they are (-dir, -keys_mil,
# -threads, ...), go test flags by their usual names (-benchtime, -cpu,
# -benchmem, -timeout). Gate flags: -alpha, -threshold, -holm=false,
# -units, -allow_removed.
set -euo pipefail

usage() {
	sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

module=
if [[ ${1:-} == -module || ${1:-} == --module ]]; then
	module=${2:?-module needs a module path, e.g. go.etcd.io/bbolt}
	shift 2
fi
[[ $# -ge 2 ]] || usage
base_ref=$1 head_ref=$2
shift 2

# Defaults, measured on this suite (docs/gating.md); a later copy of a flag
# overrides them (the flag package keeps the last value).
bench='BenchmarkReadRandom'
count=
mode=time
sim_benchtime=2000x,Scan=50x,Iterate=5x,Populate=1x,Batch=1x
time_benchtime=0.05s
out=results/compare
bench_args=(-threads 1 -cache warm -keys_mil 0.01 -valsz 256)
gate_args=()
alpha=0.05
stat_args=(-table= -ignore dir-fs,timestamp-ns)
while [[ $# -gt 0 ]]; do
	f=$1
	[[ $f == --* ]] && f=${f#-}
	case $f in
	-h | -help) usage ;;
	-bench=* | -count=* | -o=* | -alpha=* | -threshold=* | -sim_threshold=* | -units=* | -mode=* | -sim_benchtime=*) set -- "${f%%=*}" "${f#*=}" "${@:2}"; continue ;;
	esac
	case $f in
	-bench) bench=${2:?-bench needs a regular expression}; shift 2 ;;
	-count)
		count=${2:-}
		[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: -count ${count}: must be a whole number of rounds" >&2; exit 2; }
		shift 2 ;;
	-o) out=${2:?-o needs a directory}; shift 2 ;;
	-mode)
		mode=${2:-}
		[[ $mode =~ ^(time|sim|both)$ ]] || { echo "compare.sh: -mode ${mode}: must be time, sim or both" >&2; exit 2; }
		shift 2 ;;
	-sim_benchtime) sim_benchtime=${2:?-sim_benchtime needs iterations, e.g. 2000x,Scan=100x}; shift 2 ;;
	-alpha) alpha=${2:?-alpha needs a value}; gate_args+=(-alpha "$2"); stat_args+=(-alpha "$2"); shift 2 ;;
	-threshold | -sim_threshold | -units) gate_args+=("$f" "${2:?$f needs a value}"); shift 2 ;;
	-holm | -holm=* | -allow_removed) gate_args+=("$f"); shift ;;
	-benchtime) user_benchtime=${2:?-benchtime needs a value}; shift 2 ;;
	-benchtime=*) user_benchtime=${f#*=}; shift ;;
	-cpu | -timeout) bench_args+=("-test.${f#-}" "${2:?$f needs a value}"); shift 2 ;;
	-cpu=* | -timeout=*) bench_args+=("-test.${f#-}"); shift ;;
	-benchmem | -short | -v) bench_args+=("-test.${f#-}"); shift ;;
	-module) echo "compare.sh: -module goes first: compare.sh -module MODULE BASE HEAD [flags]" >&2; exit 2 ;;
	*) bench_args+=("$1"); shift ;;
	esac
done
# Counted results repeat within about 1 %, so sim mode needs only the
# rounds the signed-rank test itself needs (docs/gating.md); timed ones
# need 20 on a shared machine. -benchtime sets the time rounds' run
# length, and in sim mode alone the iterations counted (benchstat/sim
# checks them: a count, default and by family).
if [[ -n ${user_benchtime:-} ]]; then
	if [[ $mode == sim ]]; then sim_benchtime=$user_benchtime; else time_benchtime=$user_benchtime; fi
fi
time_count=${count:-20}
sim_count=${count:-9}
count=$([[ $mode == time ]] && echo "$time_count" || echo "$sim_count") # both: the smaller
# The signed-rank test needs 2^-n < alpha: fewer rounds could never fail.
need=$(awk -v a="$alpha" 'BEGIN { if (!(a > 0 && a < 1)) { print 0; exit } n = 1; while (2^-n >= a) n++; print n }')
[[ $need -gt 0 ]] || { echo "compare.sh: -alpha $alpha: must be more than 0 and less than 1" >&2; exit 2; }
if [[ $count -lt $need ]]; then
	echo "compare.sh: -count $count: the gate's signed-rank test needs at least $need paired rounds to reject anything at alpha $alpha" >&2
	exit 2
fi
out=$(realpath -m -- "$out")
started=$(date -u +%Y-%m-%dT%H:%M:%SZ) # the history store's date label
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

# The same build tags as the Makefile: RocksDB when its headers are there.
tags=${TAGS-$(test -f /usr/include/rocksdb/c.h && echo rocksdb || true)}

# The sides are built as benchstat/versions.sh builds them.
prog=compare.sh
# shellcheck source=benchstat/lib/sides.sh
source "$repo/benchstat/lib/sides.sh"
sides_tmp

if [[ -n $module ]]; then
	go list -m "$module" >/dev/null 2>&1 || { echo "compare.sh: -module $module: not a module this suite builds on (see go.mod)" >&2; exit 2; }
fi
build base "$base_ref" || exit 2
if [[ $head_ref == "$base_ref" ]]; then
	cp "$tmp/base.test" "$tmp/head.test" # an A/A run: the same code on both sides
else
	build head "$head_ref" || exit 2
fi
go build -o "$tmp/gate" ./benchstat/gate || exit 2
if [[ $mode != time ]]; then
	command -v valgrind >/dev/null || { echo "compare.sh: -mode $mode needs valgrind: make valgrind-deps installs it" >&2; exit 2; }
	go build -o "$tmp/sim" ./benchstat/sim || exit 2
fi

mkdir -p "$out"
run() { # run MODE SIDE: one round of SIDE's binary, told its side
	local side=$2
	if [[ $1 == sim ]]; then
		KVBENCH_SIDE=$side "$tmp/sim" -benchtime "$sim_benchtime" "$tmp/$side.test" -test.run '^$' -test.bench "$bench" -test.count 1 "${bench_args[@]}" -test.cpu 1
	else
		KVBENCH_SIDE=$side "$tmp/$side.test" -test.run '^$' -test.bench "$bench" -test.count 1 "${bench_args[@]}" -test.benchtime "$time_benchtime"
	fi
}
# Build or reuse each side's fixtures before anything is timed; they are
# keyed by the data, the options that shape files and the engine version,
# so both sides share them unless one side changed an engine's version.
for side in base head; do
	KVBENCH_SIDE=$side "$tmp/$side.test" -test.run '^$' -test.bench "$bench" -test.count 1 "${bench_args[@]}" -test.benchtime 1x >"$tmp/warmup-$side.txt" || {
		grep -v '^settings-' "$tmp/warmup-$side.txt" | tail -20 >&2
		echo "compare.sh: $side fails" >&2
		exit 2
	}
done
rounds() { # rounds MODE N PREFIX: N paired rounds into $out/PREFIXbase.txt and PREFIXhead.txt
	local m=$1 n=$2 p=$3
	: >"$out/${p}base.txt"
	: >"$out/${p}head.txt"
	: >"$out/${p}order.txt"
	for ((i = 1; i <= n; i++)); do
		if ((i % 2)); then order=(base head); else order=(head base); fi
		echo "compare.sh: $m round $i of $n (${order[*]})" >&2
		echo "$i ${order[*]}" >>"$out/${p}order.txt"
		for side in "${order[@]}"; do
			run "$m" "$side" >>"$out/${p}$side.txt" || { echo "compare.sh: $side fails in $m round $i; its output is in $out/${p}$side.txt" >&2; exit 2; }
		done
	done
}

what="$base_ref ($(git rev-parse --short --verify --quiet "$base_ref^{commit}" || echo file))"
[[ -n $module ]] && what="$module $base_ref"
: >"$out/benchstat.txt"
: >"$out/gate.md"
status=0
gate() { # gate MODE N PREFIX: benchstat's table and the gate's verdict on one mode's rounds
	local m=$1 n=$2 p=$3 how
	how="-bench '$bench' ${bench_args[*]}"
	if [[ $m == sim ]]; then how="$how, counted under callgrind at -benchtime $sim_benchtime"; else how="$how -benchtime $time_benchtime"; fi
	echo "compare.sh: base $what, head $head_ref, $n $m rounds alternating, $how" | tee -a "$out/benchstat.txt"
	# One table per unit: settings-<engine> lines differ between engines and
	# would otherwise split every table; free space on -dir changes every run.
	go tool benchstat "${stat_args[@]}" "$out/${p}base.txt" "$out/${p}head.txt" | tee -a "$out/benchstat.txt"
	echo
	set +e
	"$tmp/gate" "${gate_args[@]}" "$out/${p}base.txt" "$out/${p}head.txt" >"$tmp/gate-$m.md"
	local st=$?
	set -e
	if [[ $mode == both ]]; then
		{ echo "#### $m mode"; echo; cat "$tmp/gate-$m.md"; } >>"$out/gate.md"
	else
		cat "$tmp/gate-$m.md" >>"$out/gate.md"
	fi
	cat "$tmp/gate-$m.md"
	((st > status)) && status=$st
	return 0
}
case $mode in
time) rounds time "$time_count" "" && gate time "$time_count" "" ;;
sim) rounds sim "$sim_count" "" && gate sim "$sim_count" "" ;;
both) rounds time "$time_count" "" && rounds sim "$sim_count" sim- && gate time "$time_count" "" && gate sim "$sim_count" sim- ;;
esac
# Both sides go into the history store (docs/history.md) with their role,
# unless HISTORY=off; a failure to record is reported, never the verdict.
if [[ ${HISTORY:-on} != off ]]; then
	hist=(); for f in "$out"/{,sim-}{base,head}.txt; do [[ -s $f ]] && hist+=("$f"); done
	for f in "${hist[@]}"; do
		role=$(basename "$f" .txt) m=$mode
		[[ $mode == both ]] && { [[ $role == sim-* ]] && m=sim || m=time; }
		role=${role#sim-}
		ref=$base_ref; [[ $role == head ]] && ref=$head_ref
		# A ref that is a commit gives its date; a binary or module version has none.
		sha=$(git rev-parse --verify --quiet "$ref^{commit}") && cdate=$(git show -s --format=%cI "$sha") || cdate=
		go run ./benchstat/history add "$f" -label role="$role" -label ref="$ref" -label mode="$m" \
			-label commit="${sha:-$ref}" ${cdate:+-label commit-date="$cdate"} -label date="$started" \
			${module:+-label module="$module"} >&2 ||
			echo "compare.sh: $f was not recorded in the history store" >&2
	done
fi
exit "$status"
