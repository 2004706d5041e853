package workload

import (
	"flag"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
)

// A twin of bbolt, registered by this one declaration and nothing else:
// the test below shows it runs in every workload bbolt runs in, under the
// same sub-benchmark names. Adding an engine is an adapter file plus its
// registration.

// BEGIN engine example
func init() {
	twin, _ := engine.Lookup("bolt") // bbolt's adapter and declarations
	twin.Name, twin.Title = "bolttwin", "BoltTwin"
	engine.Register(twin)
}

// END engine example

// The twin test runs this test binary again with -test.bench: TestMain
// sets up an Env from these flags, as the root package's does.
var (
	testCfg = core.Default()
	testEnv *core.Env
)

func TestMain(m *testing.M) {
	testCfg.Bind(flag.CommandLine)
	flag.Parse()
	if os.Getenv("KVBENCH_BENCH_CHILD") != "" {
		pattern := flag.Lookup("test.bench").Value.String()
		e, err := core.Setup(testCfg, "^("+strings.ReplaceAll(pattern, "BenchmarkTargets/", "")+")$", os.Stdout, os.Stderr)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(2)
		}
		testEnv = e
	}
	os.Exit(m.Run())
}

// BenchmarkTargets runs every target as a sub-benchmark, in the child.
func BenchmarkTargets(b *testing.B) {
	if testEnv == nil {
		b.Skip("runs in the twin test's child process")
	}
	for _, t := range core.Targets() {
		b.Run(t.Name(), func(b *testing.B) { core.Run(b, testEnv, t.W.Name, t.Info.Name) })
	}
}

var resultName = regexp.MustCompile(`(?m)^BenchmarkTargets/(Benchmark\S+?)(-\d+)?\s+\d+\s`)

func TestTwinRunsWhereBoltRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every workload on two engines in a child process")
	}
	bolt, _ := engine.Lookup("bolt")
	twin, _ := engine.Lookup("bolttwin")
	var pats []string
	for _, w := range core.Workloads() {
		if w.Engines == nil {
			continue
		}
		if w.Engines(bolt) != w.Engines(twin) {
			t.Errorf("%s: runs on bolt %v, on the twin %v", w.Name, w.Engines(bolt), w.Engines(twin))
		}
		if w.Engines(bolt) {
			pats = append(pats, w.BenchName(bolt), w.BenchName(twin))
		}
	}
	if !strings.Contains(string(core.Wrappers()), "func BenchmarkReadRandomBoltTwin(b *testing.B)") {
		t.Error("the generated wrappers have no BenchmarkReadRandomBoltTwin")
	}
	dir := t.TempDir()
	args := []string{"-test.run=^$", "-test.bench=BenchmarkTargets/^(" + strings.Join(pats, "|") + ")$", "-test.benchtime=1x", "-dir", dir}
	for _, kv := range [][2]string{{"keys_mil", "0.002"}, {"valsz", "256"}, {"threads", "1"}, {"prefetch_traces", "2"},
		{"load_time", "50ms"}, {"knee_time", "20ms"}, {"knee_steps", "1"}, {"rate", "2000"}, {"write_rate", "200"}, {"sst_tables", "2"},
		{"ycsb", "A,E"}, {"overwrite_passes", "1"}} {
		if flag.Lookup(kv[0]) != nil {
			args = append(args, "-"+kv[0], kv[1])
		}
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "KVBENCH_BENCH_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	names := map[string][]string{}
	for _, m := range resultName.FindAllStringSubmatch(string(out), -1) {
		full := m[1]
		top, sub, _ := strings.Cut(full, "/")
		who := "bolt"
		if strings.Contains(top, "BoltTwin") {
			who, top = "bolttwin", strings.Replace(top, "BoltTwin", "Bolt", 1)
		}
		names[who] = append(names[who], top+"/"+sub)
	}
	sort.Strings(names["bolt"])
	sort.Strings(names["bolttwin"])
	if len(names["bolt"]) == 0 || strings.Join(names["bolt"], "\n") != strings.Join(names["bolttwin"], "\n") {
		t.Fatalf("bolt ran:\n%s\n\nthe twin ran:\n%s\n\noutput:\n%s", strings.Join(names["bolt"], "\n"), strings.Join(names["bolttwin"], "\n"), out)
	}
	t.Logf("%d sub-benchmarks each", len(names["bolt"]))
}
