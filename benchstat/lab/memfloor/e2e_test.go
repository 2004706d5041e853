package memfloor

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/kvbench/kvbench/internal/core/coretest"
)

// TestEndToEnd runs the real test binary on a tiny data set: Bolt, 2,000
// keys of 256 bytes, searched up to 256 MiB so that the bisection takes
// several real trials whatever the suite derives from the budget.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the suite's test binary")
	}
	start := time.Now()
	dir := t.TempDir()
	bin := filepath.Join(dir, "kvbench.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "memfloor.txt")
	// A run that stops before it measures anything (here a -dir that
	// does not exist) leaves an earlier results file as it was.
	if err := os.WriteFile(out, []byte("earlier results\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := Command.Run([]string{"-bin", bin, "-engines", "Bolt", "-shapes", "0.002x256", "-dir", filepath.Join(dir, "missing"), "-o", out}, &stdout, &stderr); code == 0 {
		t.Errorf("a missing -dir: exit 0\n%s", stderr.String())
	}
	if b, _ := os.ReadFile(out); string(b) != "earlier results\n" {
		t.Errorf("a run that measured nothing replaced -o with %q", b)
	}
	// A budget passes when populate takes at most 3x its reference time,
	// here about 10 ms: a pause of the machine of a few hundred ms (one
	// run in ten beside make bench) fails even 256 MiB, and no floor is
	// found. Such a search is run again, up to three; a fault of the code
	// fails all three.
	var got map[string]*benchfmt.Result
	for try := 1; ; try++ {
		stdout.Reset()
		stderr.Reset()
		code := Command.Run([]string{"-bin", bin, "-engines", "Bolt", "-shapes", "0.002x256", "-dir", dir, "-max", "256MiB",
			"-timeout", "20s", "-o", out}, &stdout, &stderr)
		if code == 3 {
			t.Skipf("this machine cannot make a memory cgroup:\n%s", stderr.String())
		}
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr.String())
		}
		t.Logf("%s\n(%s)", stderr.String(), time.Since(start).Round(time.Millisecond))
		got = readResults(t, out)
		if got["MemFloorBolt"] != nil || try == 3 || !strings.Contains(stderr.String(), "too slow at 256MiB") {
			break
		}
	}
	fl := got["MemFloorBolt"]
	if fl == nil || fl.Name.String() != "MemFloorBolt/valsz=256/keys=2000" {
		t.Fatalf("no MemFloorBolt/valsz=256/keys=2000 line in the results: %v", got)
	}
	value := func(unit string) float64 {
		v, ok := fl.Value(unit)
		if !ok {
			t.Errorf("the floor line has no %s", unit)
		}
		return v
	}
	if mib := value("floor-MiB"); mib < 16 || mib > 256 {
		t.Errorf("floor-MiB %g: want 16 to 256", mib)
	}
	if n := value("trials"); n < 1 || n > 12 {
		t.Errorf("trials %g", n)
	}
	for _, u := range []string{"sec/op", "floor/data", "keys/s", "x-reference", "read-ops/s"} {
		if v := value(u); !(v > 0) {
			t.Errorf("%s %g: want more than 0", u, v)
		}
	}
	if fl.GetConfig("memfloor-multiple") != "3" || !strings.HasPrefix(fl.GetConfig("settings-bolt"), "sync=false") || fl.GetConfig("mem-limit") != "" {
		t.Errorf("the floor line's configuration: multiple %q, settings-bolt %q, mem-limit %q",
			fl.GetConfig("memfloor-multiple"), fl.GetConfig("settings-bolt"), fl.GetConfig("mem-limit"))
	}
	if rd := got["ReadRandomBolt"]; rd == nil || !strings.Contains(rd.Name.String(), "/mem=") || rd.GetConfig("mem-limit") == "" {
		t.Errorf("no read result in the floor's budget: %v", rd)
	}
	// On tmpfs or ramfs there is no device: the suite skips its reads,
	// and the floors go on without them.
	mem, said := coretest.InMemory(t, dir), strings.Contains(stderr.String(), "memfloor: disk: no reads measured: ")
	if disk := got["Disk"] != nil; disk == mem || said != mem {
		t.Errorf("-dir on tmpfs or ramfs: %v; a disk result: %v; no reads measured, said on stderr: %v", mem, disk, said)
	}
	if !strings.Contains(stderr.String(), "| Bolt | 0.002x256 |") {
		t.Errorf("no table row on stderr")
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout has %q; the results go to -o", stdout.String())
	}
}

// readResults reads the results file at path, each result by its name's
// first element.
func readResults(t *testing.T, path string) map[string]*benchfmt.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]*benchfmt.Result{}
	r := benchfmt.NewReader(f, path)
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			name, _, _ := strings.Cut(res.Name.String(), "/")
			got[name] = res.Clone()
		} else if se, ok := r.Result().(*benchfmt.SyntaxError); ok {
			t.Errorf("results: %v", se)
		}
	}
	return got
}
