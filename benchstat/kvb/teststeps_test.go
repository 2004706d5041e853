package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func commandsOf(j testJob) []string {
	var out []string
	for _, c := range j.cmds {
		if c.args != nil {
			out = append(out, c.commandLine())
		} else {
			out = append(out, c.show...)
		}
	}
	return out
}

// TestUnitCommandsAsTheMakefileHad pins make unit's two jobs to the
// commands the Makefile's unit-race and unit-side recipes ran (make -n,
// written out by hand), with RocksDB and without, but for the packages
// unit-side runs without -race, and those go test may take from its
// cache: every package under internal/ and benchstat/ runs in one of
// them, once.
func TestUnitCommandsAsTheMakefileHad(t *testing.T) {
	t.Setenv("GO", "")
	race := "GORACE=atexit_sleep_ms=0 KVBENCH_CHROMIUM=skip go test -race -tags pebblegozstd"
	list := func(pattern string) []string {
		out, err := exec.Command("go", "list", "github.com/kvbench/kvbench/"+pattern).Output()
		if err != nil {
			t.Fatal(err)
		}
		var pkgs []string
		for _, p := range strings.Fields(string(out)) {
			pkgs = append(pkgs, "./"+strings.TrimPrefix(p, "github.com/kvbench/kvbench/"))
		}
		return pkgs
	}
	internal, benchstat := list("internal/..."), list("benchstat/...")
	var raced, sideBench []string
	for _, p := range internal {
		if p != unitFirst && !slices.Contains(notRaced, p) && !slices.Contains(cachedRaced, p) {
			raced = append(raced, p)
		}
	}
	for _, p := range benchstat {
		if p != e2ePkg && !slices.Contains(raceOnly, p) && !slices.Contains(cachedBenchstat, p) {
			sideBench = append(sideBench, p)
		}
	}
	for _, l := range [][]string{cachedRaced, cachedUnraced, notRaced} {
		for _, p := range l {
			if !slices.Contains(internal, p) {
				t.Errorf("%s is not a package under internal/", p)
			}
		}
	}
	for _, p := range append(slices.Clone(raceOnly), cachedBenchstat...) {
		if !slices.Contains(benchstat, p) {
			t.Errorf("%s is not a package under benchstat/", p)
		}
	}
	for _, p := range cachedUnraced {
		if !slices.Contains(notRaced, p) {
			t.Errorf("%s: cachedUnraced names a package notRaced does not", p)
		}
	}
	if len(raced) == 0 || len(sideBench) == 0 {
		t.Fatalf("go list: internal %q, benchstat %q", internal, benchstat)
	}
	for _, tags := range []string{"rocksdb", ""} {
		jobs := (&testConfig{tags: tags}).jobs()
		want := []string{"go test -race -tags pebblegozstd -c -o /dev/null ./internal/workload", race + " -count 1 -skip '^Test(Twin|YCSB|Delete|Bloom)' ./internal/workload",
			race + " -count 1 " + strings.Join(raced, " ") + " ./benchstat/internal/progress",
			race + " " + strings.Join(cachedRaced, " ")}
		if got := commandsOf(jobs["unit-race"]); !slices.Equal(got, want) {
			t.Errorf("unit-race, -tags %q:\n got %q\nwant %q", tags, got, want)
		}
		want = []string{race + " -count 1 -run '^Test(Twin|YCSB|Delete|Bloom)' ./internal/workload"}
		if got := commandsOf(jobs["unit-race-workload"]); !slices.Equal(got, want) {
			t.Errorf("unit-race-workload, -tags %q:\n got %q\nwant %q", tags, got, want)
		}
		tagArg := "rocksdb"
		if tags == "" {
			tagArg = "''"
		}
		want = []string{
			"KVBENCH_CHROMIUM=skip go test -count 1 -skip '^TestPath' " + strings.Join(sideBench, " "),
			"KVBENCH_CHROMIUM=skip go test " + strings.Join(cachedBenchstat, " "),
			"go test -count 1 -tags " + tagArg + " ./internal/engine ./internal/workload/embedded ./internal/spin ./internal/valgrind",
			"go test -tags " + tagArg + " " + strings.Join(cachedUnraced, " "),
		}
		if tags != "" {
			want = append(want, "go test -count 1 -tags rocksdb -run 'TestDamagedFixtureIsRebuilt/rocksdb|TestBudgetRuleReachesEveryLSM/rocksdb' ./internal/core")
		}
		want = append(want, "go test -count 1 -tags lmdb_bmatsuo -run /lmdb -skip TestPointReadsCallTheEnginesGet ./internal/engine")
		if got := commandsOf(jobs["unit-side"]); !slices.Equal(got, want) {
			t.Errorf("unit-side, -tags %q:\n got %q\nwant %q", tags, got, want)
		}
	}
}

// TestE2EPackageHasOnlyEndToEndTests: unit-side leaves e2ePkg to the e2e
// jobs, which run its tests that e2e matches; a test of another name
// there would run nowhere.
func TestE2EPackageHasOnlyEndToEndTests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", e2ePkg, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files in %s: %v", e2ePkg, err)
	}
	re := regexp.MustCompile(`(?m)^func (Test\w*)\(`)
	named := regexp.MustCompile(e2e)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if m[1] != "TestMain" && !named.MatchString(m[1]) {
				t.Errorf("%s: %s is not an end-to-end test (%s): no job of make test runs it", f, m[1], e2e)
			}
		}
	}
}

// TestSmokeAndVetCommandsAsTheMakefileHad pins the smoke run's go test
// and vet's commands.
func TestSmokeAndVetCommandsAsTheMakefileHad(t *testing.T) {
	t.Setenv("GO", "")
	c := &testConfig{tags: "rocksdb", staticcheck: "sc@v1", actionlint: "al@v1"}
	jobs := c.jobs()
	smoke := "go test -count 1 -tags rocksdb -run . -keys_mil 0.002 -valsz 256 -threads 1,4" +
		" -hit_rate 0,0.63,1 -prefetch_traces 2 -embed_records 2000 -memtable_mb 4 -dir '$TMP' -load_time 10ms -knee_time 20ms -knee_max_time 20ms -knee_start 64000 -knee_steps 1" +
		" -rate 2000 -write_rate 200 -sst_tables 4 ."
	if got := commandsOf(jobs["smoke-tests"]); !slices.Equal(got, []string{smoke}) {
		t.Errorf("smoke-tests:\n got %q\nwant %q", got, smoke)
	}
	vet := []string{"go vet -tags rocksdb ./...", "go run sc@v1 -tags rocksdb ./...", "go run sc@v1 -tags lmdb_bmatsuo ./internal/engine"}
	if got := commandsOf(jobs["vet"]); !slices.Equal(got, vet) {
		t.Errorf("vet:\n got %q\nwant %q", got, vet)
	}
	if got := commandsOf(jobs["gate-smoke"])[0]; got != "go run al@v1 .github/workflows/bench.yml .github/workflows/engine-gate.yml" {
		t.Errorf("gate-smoke's actionlint: %q", got)
	}
	if got := commandsOf(jobs["gate-smoke"])[1]; got != "go test -count 1 -run '^TestE2E' ./benchstat" {
		t.Errorf("gate-smoke's end-to-end tests: %q", got)
	}
	// make test's smoke runs gate-smoke's commands, the end-to-end tests
	// split in two jobs: every one of them, the sim-mode one once.
	paths := commandsOf(jobs["smoke-paths"])
	gs := commandsOf(jobs["gate-smoke"])
	if !slices.Equal(paths[len(paths)-1:], gs[:1]) {
		t.Errorf("smoke-paths does not end with gate-smoke's checks: %q", paths)
	}
	e2e := append(commandsOf(jobs["e2e"]), commandsOf(jobs["e2e-sim"])...)
	want := []string{"go test -count 1 -run '^TestE2E' -skip '^TestE2EModuleCopySim$' ./benchstat", "go test -count 1 -run '^TestE2EModuleCopySim$' ./benchstat"}
	if !slices.Equal(e2e, want) {
		t.Errorf("the end-to-end jobs:\n got %q\nwant %q", e2e, want)
	}
}

// TestEveryStepNamed: each step's jobs exist, and kvb test refuses an
// unknown step before running anything.
func TestEveryStepNamed(t *testing.T) {
	jobs := (&testConfig{}).jobs()
	for _, s := range testSteps {
		for _, j := range s.jobs {
			if _, ok := jobs[j]; !ok {
				t.Errorf("step %s: no job %s", s.name, j)
			}
		}
	}
	var errb bytes.Buffer
	if code := testCommand.Run([]string{"vet", "nosuch"}, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), `unknown step "nosuch"`) {
		t.Errorf("an unknown step: exit %d, %q", code, errb.String())
	}
}

// TestJobsSideBySide: every job runs to its end when one fails, the
// run fails, each job's output comes whole after its name, and no more
// than the workers run at once.
func TestJobsSideBySide(t *testing.T) {
	echo := func(s string) task { return task{args: []string{"sh", "-c", s}} }
	// The first two jobs to start wait (up to 5 s) until both run, so
	// two workers show as two at once however loaded the machine is.
	var running, started, most int
	var mu sync.Mutex
	count := func(context.Context, *runner) error {
		mu.Lock()
		running++
		started++
		first := started <= 2
		most = max(most, running)
		mu.Unlock()
		for deadline := time.Now().Add(5 * time.Second); first && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			both := most >= 2
			mu.Unlock()
			if both {
				break
			}
		}
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	}
	order := []testJob{
		{name: "a", cmds: []task{{do: count}, echo("for i in 1 2 3; do printf 'a line %s\\n' $i; sleep 0.01; done"), echo("exit 1"), echo("echo never")}},
		{name: "b", cmds: []task{{do: count}, echo("echo b done")}},
		{name: "c", cmds: []task{{do: count}, echo("echo c done")}},
	}
	var out bytes.Buffer
	times, err := runPool(t.Context(), order, 2, &out)
	if err == nil {
		t.Error("a failed job passed the run")
	}
	got := out.String()
	for _, want := range []string{"a line 1\na line 2\na line 3\n", "b done\n", "c done\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output without %q:\n%s", want, got)
		}
	}
	for _, j := range order {
		if !strings.Contains(got, "== "+j.name+" (") {
			t.Errorf("no line names job %s:\n%s", j.name, got)
		}
	}
	if strings.Contains(got, "never") {
		t.Errorf("a job went on after a failure:\n%s", got)
	}
	if most != 2 {
		t.Errorf("%d jobs ran at once, want 2 (the workers)", most)
	}
	if len(times) != 3 {
		t.Errorf("%d job times, want 3", len(times))
	}
}

// TestJobAfterWaitsForTheFirstCommand: a job with an after starts once
// that job's first command ended, also when it failed, and at once when
// that job is not in the run or comes after it.
func TestJobAfterWaitsForTheFirstCommand(t *testing.T) {
	var mu sync.Mutex
	var events []string
	mark := func(s string, err error) task {
		return task{do: func(context.Context, *runner) error {
			if s == "build" {
				time.Sleep(50 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			events = append(events, s)
			return err
		}}
	}
	order := []testJob{{name: "b", cmds: []task{mark("build", errors.New("no build")), mark("never", nil)}},
		{name: "w", after: "b", cmds: []task{mark("w", nil)}}}
	if _, err := runPool(t.Context(), order, 2, io.Discard); err == nil {
		t.Error("a failed job passed the run")
	}
	if want := []string{"build", "w"}; !slices.Equal(events, want) {
		t.Errorf("with its after in the run: %q, want %q", events, want)
	}
	events = nil
	if _, err := runPool(t.Context(), order[1:], 1, io.Discard); err != nil || !slices.Equal(events, []string{"w"}) {
		t.Errorf("alone: %q, %v", events, err)
	}
	// after a job that comes later, on one worker: no wait, which would
	// hold that job back for ever
	events = nil
	slices.Reverse(order)
	if _, err := runPool(t.Context(), order, 1, io.Discard); err == nil || !slices.Equal(events, []string{"w", "build"}) {
		t.Errorf("after a later job: %q, %v", events, err)
	}
}

// TestCompiledFilesFound: ELF, Mach-O, PE and ar files are compiled;
// source and a short file are not.
func TestCompiledFilesFound(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct {
		head     []byte
		compiled bool
	}{
		"elf": {[]byte("\x7fELF\x02\x01"), true}, "macho": {[]byte{0xcf, 0xfa, 0xed, 0xfe}, true}, "pe": {[]byte("MZ\x90\x00"), true},
		"ar": {[]byte("!<arch>\n"), true}, "go": {[]byte("package main\n"), false}, "short": {[]byte("M"), false},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, c.head, 0o644); err != nil {
			t.Fatal(err)
		}
		if isCompiled(p) != c.compiled {
			t.Errorf("%s: compiled %v, want %v", name, !c.compiled, c.compiled)
		}
	}
}

// TestNoTrackedFileIsCompiled: build outputs are ignored (.gitignore),
// never added; a file git tracks that starts as a compiled one fails.
func TestNoTrackedFileIsCompiled(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z", "--full-name", ":/").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if f != "" && isCompiled(filepath.Join(strings.TrimSpace(string(top)), f)) {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		t.Errorf("tracked compiled files (remove them with git rm --cached; build outputs are not part of the source): %s", strings.Join(bad, " "))
	}
}

// compiledMagic are the first bytes of compiled files: ELF, Mach-O (both
// byte orders, 32 and 64 bits), a universal binary, an ar archive ("!<ar")
// and PE ("MZ", any two bytes after).
var compiledMagic = []string{"7f454c46", "cffaedfe", "cefaedfe", "feedfacf", "feedface", "cafebabe", "213c6172", "4d5a"}

// isCompiled says whether the regular file at path starts as a compiled
// one does.
func isCompiled(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head := make([]byte, 4)
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	n, _ := io.ReadFull(f, head)
	h := hex.EncodeToString(head[:n])
	return slices.ContainsFunc(compiledMagic, func(m string) bool { return strings.HasPrefix(h, m) })
}

// TestStatusOfAFailedStep: a step's own status is the run's.
func TestStatusOfAFailedStep(t *testing.T) {
	err := (&runner{stdout: io.Discard, stderr: io.Discard}).run(t.Context(), []task{{args: []string{"sh", "-c", "exit 7"}}})
	var se *stepError
	if !errors.As(err, &se) || statusOf(err) != 7 {
		t.Errorf("a step that exits 7: %v, status %d", err, statusOf(err))
	}
}

// TestTestGoFlags: make test's build flags join GOFLAGS, and a flag the
// user set there stays as set.
func TestTestGoFlags(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "-trimpath -gcflags=all=-dwarf=false -ldflags=-w -vet=off",
		"-mod=mod":          "-mod=mod -trimpath -gcflags=all=-dwarf=false -ldflags=-w -vet=off",
		"-ldflags=-s -race": "-ldflags=-s -race -trimpath -gcflags=all=-dwarf=false -vet=off",
		"-trimpath":         "-trimpath -gcflags=all=-dwarf=false -ldflags=-w -vet=off",
		"-vet=all":          "-vet=all -trimpath -gcflags=all=-dwarf=false -ldflags=-w",
	} {
		if got := testGoFlags(in); got != want {
			t.Errorf("testGoFlags(%q) = %q, want %q", in, got, want)
		}
	}
}
