package sides

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRotation: each round starts one side later, so every side runs in
// every position; two sides alternate, as compare's paired rounds do.
func TestRotation(t *testing.T) {
	var got [][]int
	for r := range 4 {
		got = append(got, rotation(r, 3))
	}
	if want := [][]int{{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 1, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("three sides: %v, want %v", got, want)
	}
	if a, b := rotation(0, 2), rotation(1, 2); !slices.Equal(a, []int{0, 1}) || !slices.Equal(b, []int{1, 0}) {
		t.Errorf("two sides: %v then %v, want base first, then head", a, b)
	}
}

// TestFoundPackage: a version go would build at another because it lacks
// a package the suite imports is named with that package.
func TestFoundPackage(t *testing.T) {
	log := "go: finding module for package go.etcd.io/bbolt/errors\ngo: found go.etcd.io/bbolt/errors in go.etcd.io/bbolt v1.5.0\n"
	if got := foundPackage(log, "go.etcd.io/bbolt"); got != "go.etcd.io/bbolt/errors" {
		t.Errorf("foundPackage = %q", got)
	}
}

// TestTreeHashMatchesSha256sum: a module copy's label is the hash
// sha256sum gives its sorted files' sums, the label results recorded
// before kvb carry, so both key its fixtures alike.
func TestTreeHashMatchesSha256sum(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("no sha256sum")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module example.com/m\n", "a.go": "package m\n", "sub/b.c": "int x;\n", "README": "not hashed\n", ".git/x.go": "left out\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	sh := `cd "$1" && find . -type f \( -name '*.go' -o -name go.mod -o -name '*.[chs]' \) -not -path './.git/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12`
	want, err := exec.Command("bash", "-c", sh, "bash", dir).Output()
	if err != nil {
		t.Skip("no bash:", err)
	}
	got, err := treeHash(dir)
	if err != nil || got != strings.TrimSpace(string(want)) {
		t.Errorf("treeHash = %q, %v; sha256sum gives %q", got, err, want)
	}
}

// TestSideNames: reports name a side by ref and commit, by module
// version (and the spec when it differs), or by the binary's path.
func TestSideNames(t *testing.T) {
	const sha = "d1bd8ca0123456789abcdef0123456789abcdef0"
	const bolt = "go.etcd.io/bbolt"
	for _, c := range []struct {
		s    Side
		want string
	}{
		{Side{Kind: Ref, Spec: "main", Commit: sha}, "main (d1bd8ca)"},
		{Side{Kind: Ref, Spec: "origin/main~2", Commit: sha}, "origin/main~2 (d1bd8ca)"},
		{Side{Kind: Ref, Spec: "d1bd8ca01", Commit: sha}, "d1bd8ca"},
		{Side{Kind: Version, Spec: "v1.5.0", Label: "v1.5.0"}, bolt + " v1.5.0"},
		{Side{Kind: Version, Spec: "latest", Label: "v1.5.0"}, bolt + " v1.5.0 (latest)"},
		{Side{Kind: Dir, Spec: "../bbolt", Label: "local-3f09c1a2b4d5"}, bolt + " local-3f09c1a2b4d5 (../bbolt)"},
		{Side{Kind: Binary, Spec: "/tmp/x/kvbench.test"}, "/tmp/x/kvbench.test"},
	} {
		module := ""
		if c.s.Kind == Version || c.s.Kind == Dir {
			module = bolt
		}
		if got := c.s.Name(module); got != c.want {
			t.Errorf("%+v: named %q, want %q", c.s, got, c.want)
		}
	}
}
