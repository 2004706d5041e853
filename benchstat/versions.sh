#!/usr/bin/env bash
# versions.sh -module MODULE V1 V2 [V3...] [-bench REGEX] [-benchtime D] [-count N] [-o DIR] [-build_only] [flags...]
#
# The release matrix: the suite at this repository's HEAD against each
# listed version of one engine module. Each V is a version of MODULE on
# the module proxy (v1.4.3, or a query such as v1.4 or latest, resolved
# to the version it names) or a directory holding a copy of it; each is
# built into a test binary as compare.sh -module builds a side. A version
# the suite does not compile against stops the run (exit 2) before
# anything runs, naming it and the compiler's first error.
#
# Then each version builds or reuses its fixtures (keyed by the engine's
# version), and -count rounds run interleaved: round i runs every version
# once, the order rotating by one each round, so a drift of the machine
# lands on every version alike. Results go to DIR/<version>.txt (DIR:
# -o, default results/versions), the order to DIR/order.txt, benchstat's
# table across the versions (the first is the baseline) to stdout and
# DIR/benchstat.txt. Each file is then recorded in the history store
# (docs/history.md, "Release matrix") unless HISTORY=off.
#
# The workload, by default: warm random reads on one thread (-benchtime,
# default 0.2s) and a populate with sync off (1x) on the engines MODULE
# backs, 50,000 keys of 256 bytes. -bench REGEX runs that pattern
# instead (warm, one thread, at -benchtime). Other flags go to every
# run and override these: suite flags as they are (-dir, -keys_mil,
# -valsz, -threads, ...), go test flags by their usual names (-cpu,
# -timeout, -benchmem). -build_only stops after the builds.
#
# Exit status: 0 done, 2 usage error, a version that does not build, or
# a run that fails.
set -euo pipefail
prog=versions.sh

usage() { # the comment above, up to set -e
	awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
	exit 2
}
example="e.g. benchstat/versions.sh -module go.etcd.io/bbolt v1.4.0 v1.4.3 v1.5.0"

[[ ${1:-} == -h || ${1:-} == -help || ${1:-} == --help ]] && usage
if [[ ${1:-} != -module && ${1:-} != --module ]]; then
	echo "$prog: -module MODULE goes first, then two versions or more; $example" >&2
	exit 2
fi
module=${2:-}
[[ -n $module && $module != -* ]] || { echo "$prog: -module needs a module path; $example" >&2; exit 2; }
shift 2
specs=()
while [[ $# -gt 0 && $1 != -* ]]; do specs+=("$1"); shift; done
if [[ ${#specs[@]} -lt 2 ]]; then
	echo "$prog: -module $module needs two versions or more to compare, got ${#specs[@]}${specs:+ (${specs[*]})}; $example" >&2
	exit 2
fi

# Defaults; a later copy of a flag overrides them (the flag package keeps
# the last value).
bench=
benchtime=0.2s
count=10
out=results/versions
build_only=
bench_args=(-keys_mil 0.05 -valsz 256)
stat_args=(-table= -ignore dir-fs,timestamp-ns)
while [[ $# -gt 0 ]]; do
	f=$1
	[[ $f == --* ]] && f=${f#-}
	case $f in
	-h | -help) usage ;;
	-bench=* | -count=* | -o=* | -benchtime=*) set -- "${f%%=*}" "${f#*=}" "${@:2}"; continue ;;
	esac
	case $f in
	-bench) bench=${2:?-bench needs a regular expression}; shift 2 ;;
	-benchtime) benchtime=${2:?-benchtime needs a value}; shift 2 ;;
	-count)
		count=${2:-}
		[[ $count =~ ^[1-9][0-9]*$ ]] || { echo "$prog: -count ${count}: must be a whole number of rounds" >&2; exit 2; }
		shift 2 ;;
	-o) out=${2:?-o needs a directory}; shift 2 ;;
	-build_only) build_only=1; shift ;;
	-cpu | -timeout) bench_args+=("-test.${f#-}" "${2:?$f needs a value}"); shift 2 ;;
	-cpu=* | -timeout=*) bench_args+=("-test.${f#-}"); shift ;;
	-benchmem | -short | -v) bench_args+=("-test.${f#-}"); shift ;;
	-module) echo "$prog: -module goes first, once: $example" >&2; exit 2 ;;
	*) bench_args+=("$1"); shift ;;
	esac
done
out=$(realpath -m -- "$out")
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
# The suite's commit, read once: the sides are built from it, and a commit
# made while the rounds run must not relabel them.
suite_sha=$(git rev-parse HEAD)
suite_date=$(git log -1 --format=%cI "$suite_sha")
# shellcheck source=benchstat/lib/sides.sh
source "$repo/benchstat/lib/sides.sh"

# Every version is checked before anything is built: the module is one the
# suite builds on, each version exists (a directory holds that module),
# and no two name the same version.
go list -m "$module" >/dev/null 2>&1 || { echo "$prog: -module $module: not a module this suite builds on (see go.mod)" >&2; exit 2; }
labels=() # each version as its results, fixtures and history know it
exact=()  # each version as it is built: the version a query names, a directory's full path
for spec in "${specs[@]}"; do
	if [[ -d $spec ]]; then
		dir=$(realpath -- "$spec")
		[[ -f $dir/go.mod ]] || { echo "$prog: $spec: no go.mod in that directory" >&2; exit 2; }
		got=$(awk '$1 == "module" { gsub(/"/, "", $2); print $2; exit }' "$dir/go.mod")
		[[ $got == "$module" ]] || { echo "$prog: $spec: holds module ${got:-(none)}, not $module" >&2; exit 2; }
		label=$(module_label "$dir") this=$dir
	else
		if ! res=$(go list -m -f '{{.Version}}' "$module@$spec" 2>&1); then
			echo "$prog: $module $spec: not found on the module proxy (go list -m: $(head -1 <<<"$res"))" >&2
			exit 2
		fi
		label=$(tail -1 <<<"$res") this=$label
		[[ $label == "$spec" ]] || echo "$prog: $module $spec is $label" >&2
	fi
	for l in "${labels[@]}"; do
		[[ $l != "$label" ]] || { echo "$prog: $spec: $module $label is listed twice" >&2; exit 2; }
	done
	labels+=("$label") exact+=("$this")
done
n=${#labels[@]}
file_of() { # file_of I: the results file's base name of version I
	echo "${labels[$1]}" | tr -c 'A-Za-z0-9._+\n-' '_'
}

# The engines MODULE backs, from the engine registry: their benchmarks are
# the default workload.
tags=${TAGS-$(test -f /usr/include/rocksdb/c.h && echo rocksdb || true)}
titles=$(go run -tags "$tags" ./internal/cmd/genwrappers -engines_of "$module" | paste -sd'|') || exit 2
# A step: a pattern, its -benchtime and its own flags (before the user's).
if [[ -n $bench ]]; then
	step_bench=("$bench") step_time=("$benchtime") step_flags=("-cache warm -threads 1")
	what="-bench '$bench' -benchtime $benchtime"
else
	step_bench=("^BenchmarkReadRandom($titles)\$" "^BenchmarkPopulate($titles)\$/valsz/batch/sync=false")
	step_time=("$benchtime" 1x) step_flags=("-cache warm -threads 1" "")
	what="warm random reads (one thread, $benchtime) and a populate (sync off) of $titles"
fi

sides_tmp

# first_error LOG: the compiler's first error in a build's output.
first_error() {
	grep -m1 -E '^[^ #][^ :]*\.go:[0-9]+(:[0-9]+)?: ' "$1" ||
		grep -v -m1 -E "^($prog: building|go: downloading|go: finding|go: found|#)" "$1" || echo "(no output)"
}
broken=()
for ((i = 0; i < n; i++)); do
	log=$tmp/build-$i.log
	st=0
	build_module "v$i" "${exact[$i]}" 2> >(tee "$log" >&2) || st=$?
	wait $! 2>/dev/null || true # the tee, so the log is whole
	if [[ $st != 0 ]]; then
		broken+=("$module ${labels[$i]}: $(first_error "$log")")
		continue
	fi
	# -mod=mod lifts the module above the version asked for when the suite
	# imports a package of it that version lacks, or another requirement
	# needs a later one; then it is not that version that would run.
	if [[ ! -d ${exact[$i]} ]]; then
		got=$(cd "$tmp/v$i" && go list -mod=mod -m -f '{{.Version}}' "$module")
		if [[ $got != "${labels[$i]}" ]]; then
			pkg=$(sed -n "s|^go: found \([^ ]*\) in $module .*|\1|p" "$log" | head -1)
			if [[ -n $pkg ]]; then
				broken+=("$module ${labels[$i]}: it has no package $pkg, which the suite imports (go would build $got instead)")
			else
				broken+=("$module ${labels[$i]}: the suite's other requirements select $got instead")
			fi
		fi
	fi
done
if [[ ${#broken[@]} -gt 0 ]]; then
	for b in "${broken[@]}"; do echo "$prog: the suite at $(git rev-parse --short HEAD) does not build with $b" >&2; done
	exit 2
fi
echo "$prog: every version builds: $module ${labels[*]}" >&2
[[ -z $build_only ]] || exit 0

step() { # step I S BENCHTIME: step S once on version I
	# shellcheck disable=SC2086 # step_flags are a few fixed words
	"$tmp/v$1.test" -test.run '^$' -test.bench "${step_bench[$2]}" -test.count 1 ${step_flags[$2]} "${bench_args[@]}" -test.benchtime "$3"
}
run() { # run I: every step once on version I
	local s
	for s in "${!step_bench[@]}"; do step "$1" "$s" "${step_time[$s]}" || return; done
}

# Build or reuse each version's fixtures before anything is timed, and
# check each step runs something.
for ((i = 0; i < n; i++)); do
	for s in "${!step_bench[@]}"; do
		w=$tmp/warmup-$i-$s.txt
		step "$i" "$s" 1x >"$w" 2>&1 || {
			grep -v '^settings-' "$w" | tail -20 >&2
			echo "$prog: $module ${labels[$i]} fails" >&2
			exit 2
		}
		grep -q '^Benchmark.*[[:space:]]ns/op' "$w" || { echo "$prog: -bench '${step_bench[$s]}': no benchmark of this suite matches" >&2; exit 2; }
	done
done

mkdir -p "$out"
: >"$out/order.txt"
for ((i = 0; i < n; i++)); do : >"$out/$(file_of "$i").txt"; done
for ((r = 0; r < count; r++)); do
	order=()
	for ((k = 0; k < n; k++)); do order+=($(((r + k) % n))); done
	names=(); for i in "${order[@]}"; do names+=("${labels[$i]}"); done
	echo "$prog: round $((r + 1)) of $count (${names[*]})" >&2
	echo "$((r + 1)) ${names[*]}" >>"$out/order.txt"
	for i in "${order[@]}"; do
		f=$out/$(file_of "$i").txt
		run "$i" >>"$f" || { echo "$prog: $module ${labels[$i]} fails in round $((r + 1)); its output is in $f" >&2; exit 2; }
	done
done

echo "$prog: $module ${labels[*]}, $count rounds interleaved, $what, ${bench_args[*]}" | tee "$out/benchstat.txt"
cols=(); for ((i = 0; i < n; i++)); do cols+=("${labels[$i]}=$out/$(file_of "$i").txt"); done
go tool benchstat "${stat_args[@]}" "${cols[@]}" | tee -a "$out/benchstat.txt"

# Each version is a point of the module's release series in the history
# store; a failure to record is reported, never the run's status.
if [[ ${HISTORY:-on} != off ]]; then
	for ((i = 0; i < n; i++)); do
		f=$out/$(file_of "$i").txt
		go run ./benchstat/history add "$f" -label role=versions -label series=release -label module="$module" \
			-label version="${labels[$i]}" -label commit="$suite_sha" -label commit-date="$suite_date" >&2 ||
			echo "$prog: $f was not recorded in the history store" >&2
	done
fi
