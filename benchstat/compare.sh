#!/usr/bin/env bash
# compare.sh [-module MODULE] BASE HEAD [-bench REGEX] [-count N] [-o DIR] [flags...]
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
	sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2
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
count=20
out=results/compare
bench_args=(-threads 1 -cache warm -test.benchtime 0.05s -keys_mil 0.01 -valsz 256)
gate_args=()
alpha=0.05
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
		[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: -count ${count}: must be a whole number of rounds" >&2; exit 2; }
		shift 2 ;;
	-o) out=${2:?-o needs a directory}; shift 2 ;;
	-alpha) alpha=${2:?-alpha needs a value}; gate_args+=(-alpha "$2"); stat_args+=(-alpha "$2"); shift 2 ;;
	-threshold | -units) gate_args+=("$f" "${2:?$f needs a value}"); shift 2 ;;
	-holm | -holm=* | -allow_removed) gate_args+=("$f"); shift ;;
	-benchtime | -cpu | -timeout) bench_args+=("-test.${f#-}" "${2:?$f needs a value}"); shift 2 ;;
	-benchtime=* | -cpu=* | -timeout=*) bench_args+=("-test.${f#-}"); shift ;;
	-benchmem | -short | -v) bench_args+=("-test.${f#-}"); shift ;;
	-module) echo "compare.sh: -module goes first: compare.sh -module MODULE BASE HEAD [flags]" >&2; exit 2 ;;
	*) bench_args+=("$1"); shift ;;
	esac
done
# The signed-rank test needs 2^-n < alpha: fewer rounds could never fail.
need=$(awk -v a="$alpha" 'BEGIN { if (!(a > 0 && a < 1)) { print 0; exit } n = 1; while (2^-n >= a) n++; print n }')
[[ $need -gt 0 ]] || { echo "compare.sh: -alpha $alpha: must be more than 0 and less than 1" >&2; exit 2; }
if [[ $count -lt $need ]]; then
	echo "compare.sh: -count $count: the gate's signed-rank test needs at least $need paired rounds to reject anything at alpha $alpha" >&2
	exit 2
fi
out=$(realpath -m -- "$out")
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

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

worktree() { # worktree NAME SHA: a detached checkout of SHA at $tmp/NAME
	git -C "$repo" worktree add --quiet --detach "$tmp/$1" "$2"
	worktrees+=("$tmp/$1")
}

# tree_hash DIR: the content of a module copy's sources, which keys the
# fixtures its side writes (a directory's version is what is in it).
tree_hash() {
	(cd "$1" && find . -type f \( -name '*.go' -o -name go.mod -o -name '*.[chs]' \) -not -path './.git/*' -print0 |
		sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
}

build_ref() { # build_ref NAME REF: the test binary of a commit
	local sha
	sha=$(git rev-parse --verify --quiet "$2^{commit}") || { echo "compare.sh: $1 $2: not a commit in $repo" >&2; return 2; }
	worktree "$1" "$sha"
	echo "compare.sh: building $1 ($(git log -1 --format='%h %s' "$sha"))" >&2
	(cd "$tmp/$1" && go test -c -tags "$tags" -o "$tmp/$1.test" .)
}

build_module() { # build_module NAME SPEC: the suite at HEAD with $module at SPEC
	local spec=$2 label wt=$tmp/$1
	worktree "$1" "$(git rev-parse HEAD)"
	if [[ -d $spec ]]; then
		spec=$(realpath -- "$spec")
		[[ -f $spec/go.mod ]] || { echo "compare.sh: $1 $2: no go.mod in that directory" >&2; return 2; }
		label="local-$(tree_hash "$spec")"
		(cd "$wt" && go mod edit -replace "$module=$spec")
	else
		label=$spec
		(cd "$wt" && go mod edit -dropreplace "$module" -require "$module@$spec")
	fi
	echo "compare.sh: building $1: the suite at $(git log -1 --format=%h HEAD) with $module $label ($2)" >&2
	(cd "$wt" && go test -c -mod=mod -tags "$tags" -o "$tmp/$1.test" \
		-ldflags "-X github.com/kvbench/kvbench/internal/engine.ModuleLabel=$module=$label" .)
}

build() { # build NAME SPEC
	if [[ -n $module ]]; then
		build_module "$@"
	elif [[ -f $2 && -x $2 ]]; then
		cp -- "$2" "$tmp/$1.test"
	else
		build_ref "$@"
	fi
}

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

mkdir -p "$out"
: >"$out/base.txt"
: >"$out/head.txt"
run() { # run SIDE [extra test flags]: one round of SIDE's binary, told its side
	local side=$1
	shift
	KVBENCH_SIDE=$side "$tmp/$side.test" -test.run '^$' -test.bench "$bench" -test.count 1 "${bench_args[@]}" "$@"
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
: >"$out/order.txt"
for ((i = 1; i <= count; i++)); do
	if ((i % 2)); then order=(base head); else order=(head base); fi
	echo "compare.sh: round $i of $count (${order[*]})" >&2
	echo "$i ${order[*]}" >>"$out/order.txt"
	for side in "${order[@]}"; do
		run "$side" >>"$out/$side.txt" || { echo "compare.sh: $side fails in round $i; its output is in $out/$side.txt" >&2; exit 2; }
	done
done

what="$base_ref ($(git rev-parse --short --verify --quiet "$base_ref^{commit}" || echo file))"
[[ -n $module ]] && what="$module $base_ref"
echo "compare.sh: base $what, head $head_ref, $count rounds alternating, -bench '$bench' ${bench_args[*]}" | tee "$out/benchstat.txt"
# One table per unit: settings-<engine> lines differ between engines and
# would otherwise split every table; free space on -dir changes every run.
go tool benchstat "${stat_args[@]}" "$out/base.txt" "$out/head.txt" | tee -a "$out/benchstat.txt"
echo
set +e
"$tmp/gate" "${gate_args[@]}" "$out/base.txt" "$out/head.txt" >"$out/gate.md"
status=$?
set -e
cat "$out/gate.md"
exit "$status"
