package engine

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// spinSource is appended to the slowed file. A file of another module
// cannot import the suite's packages, so the loop is written out; noinline
// keeps it one function whose loop objdump can measure.
const spinSource = `

// kvbenchSpinSink keeps the injected loop's result live.
var kvbenchSpinSink uint64

//go:noinline
func kvbenchSpin() {
	x := kvbenchSpinSink
	for i := 0; i < %d; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	kvbenchSpinSink = x
}
`

// slowedModule returns a copy of the module modVer (path@version) found in
// modDir, in which file (a path inside it) calls a loop of steps iterations
// first thing in the function declared by decl; every other file is a
// symbolic link into modDir. go build -overlay may not replace files in the
// module cache, hence a copy. It is kept under the user's cache directory,
// named by module, version and steps, so the build cache keeps its compiled
// packages from one run to the next (a new directory every run would
// recompile Pebble every time).
func slowedModule(t *testing.T, modVer, modDir, file, decl string, steps int) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(modDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(src, []byte(decl)) != 1 {
		t.Fatalf("%s does not declare %q once: has the engine's point read moved?", filepath.Join(modDir, file), decl)
	}
	src = bytes.Replace(src, []byte(decl), []byte(decl+"\n\tkvbenchSpin()"), 1)
	src = fmt.Appendf(src, spinSource, steps)

	base, err := os.UserCacheDir()
	if err != nil {
		base = t.TempDir()
	}
	// Beside the suite's default -dir (<cache>/kvbench), never in it: the
	// suite refuses a kvbench directory it did not create.
	dir := filepath.Join(base, "kvbench-slowed-modules", fmt.Sprintf("%s-%d", strings.ReplaceAll(modVer, "/", "_"), steps))
	if slowedCopyDone(dir, file, src) {
		return dir
	}
	// Built beside its place and renamed into it, so a concurrent run
	// never sees half a copy.
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".building-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	err = filepath.WalkDir(modDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(modDir, p)
		to := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case rel == file:
			return os.WriteFile(to, src, 0o644)
		default:
			return os.Symlink(p, to)
		}
	})
	if err == nil {
		// A module from before modules (bmatsuo/lmdb-go) has no go.mod,
		// which a replacement directory needs.
		path, _, _ := strings.Cut(modVer, "@")
		if _, serr := os.Stat(filepath.Join(tmp, "go.mod")); serr != nil {
			err = os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module "+path+"\n"), 0o644)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil && !slowedCopyDone(dir, file, src) {
		t.Fatal(err)
	}
	return dir
}

// slowedCopyDone says whether dir holds a finished copy: its go.mod and
// the slowed file.
func slowedCopyDone(dir, file string, src []byte) bool {
	old, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil || !bytes.Equal(old, src) {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// loopLength reads binutils' objdump listing of one function (objdump
// -d --no-show-raw-insn --disassemble=SYMBOL) and returns the
// instructions of its loop: from the target of its shortest backward
// jump to the jump, inclusive; 0 when the listing has no such jump.
func loopLength(listing []byte) int {
	// "  47a770:\tjl     47a74b <main.kvbenchSpin+0xb>"
	insn := regexp.MustCompile(`^\s*([0-9a-f]+):\s+(\S+)\s*(\S*)`)
	var addrs []uint64
	var jumps [][2]uint64 // a jump's address, its target
	for _, line := range strings.Split(string(listing), "\n") {
		m := insn.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		addr, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			continue
		}
		addrs = append(addrs, addr)
		if strings.HasPrefix(m[2], "j") {
			if to, err := strconv.ParseUint(m[3], 16, 64); err == nil && to <= addr {
				jumps = append(jumps, [2]uint64{addr, to})
			}
		}
	}
	best := 0
	for _, j := range jumps {
		n := 0
		for _, a := range addrs {
			if a >= j[1] && a <= j[0] {
				n++
			}
		}
		if n > 0 && (best == 0 || n < best) {
			best = n
		}
	}
	return best
}

// instrPerOp reads kvb sim's output: instr/op by the engine part of
// each ReadRandom leaf's name.
func instrPerOp(out []byte) map[string]float64 {
	line := regexp.MustCompile(`(?m)^BenchmarkReadRandom([A-Za-z]+)/\S*\s+\d+\s+([0-9.]+) instr/op`)
	got := map[string]float64{}
	for _, m := range line.FindAllSubmatch(out, -1) {
		if v, err := strconv.ParseFloat(string(m[2]), 64); err == nil {
			got[string(m[1])] = v
		}
	}
	return got
}
