# sides.sh: how benchstat/compare.sh and benchstat/versions.sh build a
# side, a test binary of the suite, so both build it one way. Sourced, not
# run. The script that sources it sets:
#
#   prog    its own name, the prefix of every message (compare.sh)
#   repo    this repository's top directory
#   module  the engine module a side replaces ("" when sides are refs)
#   tags    the build tags (RocksDB when its headers are there)
#
# and calls sides_tmp once, which makes $tmp, where the sides' worktrees
# and binaries live until the script exits.

# sides_tmp: the scratch directory $tmp and the traps that remove it and
# every worktree made in it.
sides_tmp() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/kvbench-${prog%.sh}.XXXXXX")
	worktrees=()
	trap sides_cleanup EXIT
	trap 'exit 130' INT TERM
}

sides_cleanup() {
	for w in "${worktrees[@]}"; do git -C "$repo" worktree remove --force "$w" 2>/dev/null || true; done
	rm -rf "$tmp"
	git -C "$repo" worktree prune 2>/dev/null || true
}

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
	sha=$(git rev-parse --verify --quiet "$2^{commit}") || { echo "$prog: $1 $2: not a commit in $repo" >&2; return 2; }
	worktree "$1" "$sha"
	echo "$prog: building $1 ($(git log -1 --format='%h %s' "$sha"))" >&2
	(cd "$tmp/$1" && go test -c -tags "$tags" -o "$tmp/$1.test" .)
}

# module_label SPEC: the label a side built with $module at SPEC gives its
# engine version (fixtures are keyed by it): the version itself, or
# local-<hash of the sources> for a directory.
module_label() {
	if [[ -d $1 ]]; then echo "local-$(tree_hash "$1")"; else echo "$1"; fi
}

build_module() { # build_module NAME SPEC: the suite at HEAD with $module at SPEC
	local spec=$2 label wt=$tmp/$1
	worktree "$1" "$(git rev-parse HEAD)"
	if [[ -d $spec ]]; then
		spec=$(realpath -- "$spec")
		[[ -f $spec/go.mod ]] || { echo "$prog: $1 $2: no go.mod in that directory" >&2; return 2; }
		label=$(module_label "$spec")
		(cd "$wt" && go mod edit -replace "$module=$spec")
	else
		label=$spec
		(cd "$wt" && go mod edit -dropreplace "$module" -require "$module@$spec")
	fi
	echo "$prog: building $1: the suite at $(git log -1 --format=%h HEAD) with $module $label ($2)" >&2
	(cd "$wt" && go test -c -mod=mod -tags "$tags" -o "$tmp/$1.test" \
		-ldflags "-X github.com/kvbench/kvbench/internal/engine.ModuleLabel=$module=$label" .)
}

build() { # build NAME SPEC: a module version or directory, a binary, or a ref
	if [[ -n $module ]]; then
		build_module "$@"
	elif [[ -f $2 && -x $2 ]]; then
		cp -- "$2" "$tmp/$1.test"
	else
		build_ref "$@"
	fi
}
