#!/usr/bin/env bash
# history-artifact.sh [-mode time|sim|both] [-label k=v]... [-base k=v]... [-head k=v]... OUT_DIR COMPARE_DIR
#
# Copies each side of a compare.sh run (COMPARE_DIR/base.txt, head.txt,
# and with -mode both sim-base.txt, sim-head.txt) to OUT_DIR, each
# preceded by configuration lines that `go run ./benchstat/history add`
# keeps as the run's labels: role (base or head), mode (time or sim), the
# -label pairs, and the -base or -head pairs of its side (ref, commit,
# commit-date), then date (now, in UTC, unless a -label gives one). The
# copies stay benchfmt: benchstat reads them, every line applying to the
# results after it. Run it where a workflow uploads results of one runner,
# with -label machine=NAME; docs/history.md, "More than one machine".
#
# -mode says which mode base.txt and head.txt were measured in, as given
# to compare.sh (default time). Keys are benchfmt's: a lower-case letter
# first, no spaces or colons. Exits 2 on a usage error, before writing.
set -euo pipefail

usage() {
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

mode=time
all=() base=() head=()
pair() { # pair FLAG K=V: checks one pair
	local k=${2%%=*}
	[[ $2 == *=* && $k =~ ^[a-z][^[:space:]:]*$ && $2 != *$'\n'* ]] ||
		{ echo "history-artifact.sh: $1 $2: want key=value, the key a lower-case letter then no spaces or colons" >&2; exit 2; }
}
while [[ $# -gt 0 ]]; do
	case $1 in
	-h | -help | --help) usage ;;
	-mode)
		mode=${2:-}
		[[ $mode =~ ^(time|sim|both)$ ]] || { echo "history-artifact.sh: -mode $mode: must be time, sim or both" >&2; exit 2; }
		shift 2 ;;
	-label) pair "$1" "${2:-}"; all+=("$2"); shift 2 ;;
	-base) pair "$1" "${2:-}"; base+=("$2"); shift 2 ;;
	-head) pair "$1" "${2:-}"; head+=("$2"); shift 2 ;;
	-*) echo "history-artifact.sh: unknown flag $1" >&2; usage ;;
	*) break ;;
	esac
done
[[ $# -eq 2 ]] || usage
out=$1 compare=$2
[[ -d $compare ]] || { echo "history-artifact.sh: $compare: not a directory" >&2; exit 2; }
files=()
for f in "$compare"/{,sim-}{base,head}.txt; do [[ -s $f ]] && files+=("$f"); done
[[ ${#files[@]} -gt 0 ]] || { echo "history-artifact.sh: $compare holds no compare.sh results (base.txt, head.txt, sim-base.txt, sim-head.txt)" >&2; exit 2; }

date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
for kv in "${all[@]}"; do [[ $kv == date=?* ]] && date=${kv#date=}; done
mkdir -p "$out"
for f in "${files[@]}"; do
	name=$(basename "$f")
	role=${name%.txt} m=$mode
	[[ $mode == both ]] && { [[ $role == sim-* ]] && m=sim || m=time; }
	role=${role#sim-}
	side=("${base[@]}")
	[[ $role == head ]] && side=("${head[@]}")
	{
		echo "role: $role"
		echo "mode: $m"
		for kv in "${all[@]}" "${side[@]}"; do [[ $kv == date=* ]] || echo "${kv%%=*}: ${kv#*=}"; done
		echo "date: $date"
		cat -- "$f"
	} >"$out/$name"
	echo "history-artifact.sh: $out/$name ($role, $m)" >&2
done
