package memfloor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/internal/memlimit"
)

// startGrace is what a budgeted run may take beyond the multiple of the
// reference run's wall time before it is killed: starting, evicting,
// entering the budget, the cgroup's removal at exit.
const startGrace = 10 * time.Second

// run is the command; it returns the exit status.
func run(call cli.Call, g *given, extra []string) int {
	stdout, stderr := call.Stdout, call.Stderr
	c, ok := g.checked(extra, stderr)
	if !ok {
		return 2
	}
	out := stdout
	var tmp *os.File
	var err error
	if c.out != "" {
		// Results go to a file beside -o, which replaces it only once the
		// run has measured something: a run that stops before its first
		// floor (a bad -dir, no cgroup) leaves an earlier results file as
		// it was.
		tmp, err = os.CreateTemp(filepath.Dir(c.out), "."+filepath.Base(c.out)+".*.tmp")
		if err != nil {
			fmt.Fprintf(stderr, "kvb memfloor: %v\n", err)
			return 2
		}
		defer os.Remove(tmp.Name()) // gone by then when it was renamed
		out = tmp
	}
	m := &memfloor{config: c, log: stderr, w: newResultWriter(out, c)}
	err = m.all()
	m.table()
	if tmp != nil {
		cerr := tmp.Close()
		if len(m.rows) == 0 {
			c.out = "" // nothing measured: -o keeps what it had
		} else if cerr == nil {
			cerr = os.Rename(tmp.Name(), c.out)
		}
		if cerr != nil && err == nil {
			err = cerr
		}
	}
	var st stop
	if errors.As(err, &st) {
		fmt.Fprintf(stderr, "kvb memfloor: %s\n", st.msg)
		return st.code
	} else if err != nil {
		fmt.Fprintf(stderr, "kvb memfloor: %v\n", err)
		return 1
	}
	if c.out != "" {
		fmt.Fprintf(stderr, "memfloor: wrote %s\n", c.out)
	}
	return 0
}

// stop ends the command with a message and an exit status.
type stop struct {
	code int
	msg  string
}

func (s stop) Error() string { return s.msg }

// memfloor is one invocation: its flags, where progress and results go,
// and a row per engine and shape for the closing table.
type memfloor struct {
	config
	log     io.Writer
	w       *resultWriter
	rows    []row
	diskOps float64
}

// row is one engine and shape's outcome.
type row struct {
	engine     string
	shape      shape
	s          search
	refKeysS   float64 // reference populate keys/s (a budget of twice the data)
	floorKeysS float64
	readOps    float64 // 0 when the read run did not finish
	readNote   string
}

func (m *memfloor) logf(format string, args ...any) {
	fmt.Fprintf(m.log, "memfloor: "+format+"\n", args...)
}

func (m *memfloor) all() error {
	m.w.header()
	if err := m.disk(); err != nil {
		return err
	}
	for _, sh := range m.shapes {
		for _, eng := range m.engines {
			if err := m.engine(eng, sh); err != nil {
				return err
			}
		}
	}
	return nil
}

// disk runs the device's one-thread 4 KiB random reads, the reads'
// reference, once.
func (m *memfloor) disk() error {
	c, err := m.suite.run(m.timeout, m.shapes[0], "-test.run", "^$", "-test.bench", "^BenchmarkDisk$/op=randread-4k",
		"-test.benchtime", "1s", "-threads", "1")
	if err != nil {
		return err
	}
	if c.code == 3 {
		return stop{3, "this machine cannot make a memory budget: " + c.firstError()}
	}
	r := c.result("Disk/")
	if why, ok := diskSkipped(c.stderr); ok && c.code == 0 && !c.timedOut && r == nil {
		// -dir in memory (tmpfs, ramfs): no device to read, as the suite
		// says; the floors do not need it.
		m.logf("disk: no reads measured: %s", why)
		return nil
	}
	if c.code != 0 || c.timedOut || r == nil {
		return stop{1, "the disk's reference run failed:\n" + c.describe(m.bin)}
	}
	m.diskOps, _ = r.Value("ops/s")
	m.logf("disk: %.0f random 4 KiB reads/s at one thread", m.diskOps)
	return m.w.child(c, r)
}

// diskSkipped is the reason the suite gave, on stderr, for measuring no
// random reads of the device under -dir.
func diskSkipped(stderr string) (string, bool) {
	for line := range strings.Lines(stderr) {
		if why, ok := strings.CutPrefix(strings.TrimSpace(line), "[kvbench] disk: op=randread-4k skipped: "); ok {
			return why, true
		}
	}
	return "", false
}

func (m *memfloor) engine(eng string, sh shape) error {
	populate := "Populate" + eng + "/"
	label := fmt.Sprintf("%s %s (%d keys, %s)", eng, sh, sh.keys, mib(sh.dataBytes()))
	// The reference runs in a budget the data fits twice over, so that it
	// is configured by the same budget rule as every trial and differs
	// from them only in memory to spare.
	refMiB := max(int(2*sh.dataBytes()>>20)+1, 64)
	ref, err := m.suite.run(m.timeout, sh, "-test.run", "^$", "-test.bench", "^BenchmarkPopulate"+eng+"$/valsz/mem/batch/sync=false",
		"-test.benchtime", "1x", "-mem_limit", fmt.Sprintf("%dMiB", refMiB))
	if err != nil {
		return err
	}
	if ref.code == 3 { // the first run in a budget: no cgroup here (not root, no delegated tree)
		return stop{3, "this machine cannot make a memory budget: " + ref.firstError()}
	}
	refNs := ref.value(populate, "ns/op")
	if ref.code != 0 || ref.timedOut || refNs <= 0 {
		return stop{1, label + fmt.Sprintf(": the reference populate (in %dMiB) failed:\n", refMiB) + ref.describe(m.bin)}
	}
	r := row{engine: eng, shape: sh, refKeysS: ref.value(populate, "keys/s")}
	deadline := min(m.timeout, time.Duration(m.multiple*float64(ref.wall))+startGrace)
	m.logf("%s: reference populate in %dMiB %s (%.0f keys/s); a budget passes within %g× (%s), a run is killed at %s",
		label, refMiB, time.Duration(refNs).Round(time.Millisecond), r.refKeysS, m.multiple, time.Duration(m.multiple*refNs).Round(time.Millisecond), deadline.Round(time.Second))

	lo, hi := int(memlimit.Floor>>20), m.maxMiB
	if hi == 0 {
		hi = int((sh.dataBytes() + 1<<20 - 1) >> 20)
	}
	hi = max(hi, lo)
	try := func(mb int) trial {
		c, err := m.suite.run(deadline, sh, "-test.run", "^$", "-test.bench", "^BenchmarkPopulate"+eng+"$/valsz/mem/batch/sync=false",
			"-test.benchtime", "1x", "-mem_limit", fmt.Sprintf("%dMiB", mb))
		if err != nil {
			c = &childRun{exit: exit{code: -1, stderr: err.Error()}}
		}
		c.nsOp = c.value(populate, "ns/op")
		t := trial{mib: mb, outcome: classify(c.exit, m.multiple*refNs), run: c}
		m.logf("%s: %dMiB %v in %s%s", label, mb, t.outcome, c.wall.Round(time.Millisecond), detail(t, refNs, deadline))
		return t
	}
	r.s, err = bisect(lo, hi, m.res, try)
	var se stopError
	if errors.As(err, &se) {
		if se.t.outcome == noBudget {
			return stop{3, "this machine cannot make a memory budget: " + se.t.run.firstError()}
		}
		return stop{1, fmt.Sprintf("%s: populate in %dMiB failed:\n%s", label, se.t.mib, se.t.run.describe(m.bin))}
	}
	if r.s.floor == 0 {
		last := r.s.trials[len(r.s.trials)-1]
		m.logf("%s: floor above the data size: %v at %dMiB", label, last.outcome, hi)
		m.rows = append(m.rows, r)
		return m.w.aboveData(eng, sh, hi, last.outcome)
	}
	ft, _ := r.s.floorTrial()
	r.floorKeysS = ft.run.value(populate, "keys/s")
	m.logf("%s: floor %dMiB (%.2f of the data) after %d trials", label, r.s.floor, float64(r.s.floor<<20)/float64(sh.dataBytes()), len(r.s.trials))

	read, err := m.suite.run(m.timeout, sh, "-test.run", "^$", "-test.bench", "^BenchmarkReadRandom"+eng+"$/valsz/mem/cache=warm",
		"-test.benchtime", "1s", "-threads", "1", "-hit_rate", "1", "-cache", "warm", "-readahead", "off",
		"-mem_limit", fmt.Sprintf("%dMiB", r.s.floor))
	if err != nil {
		return err
	}
	rr := read.result("ReadRandom" + eng + "/")
	switch o := classify(read.exit, 0); {
	case read.code == 0 && rr != nil:
		r.readOps, _ = rr.Value("ops/s")
		m.logf("%s: reads at the floor: %.0f ops/s", label, r.readOps)
	case o == killed || o == tooSlow:
		r.readNote = "reads " + o.String()
		m.logf("%s: the read run at the floor was %v %s", label, o, strings.Join(read.notes, "; "))
	default:
		return stop{1, label + ": the read run at the floor failed:\n" + read.describe(m.bin)}
	}
	m.rows = append(m.rows, r)
	if err := m.w.floor(r, ft.run.result(populate), ref.value(populate, "ns/op")); err != nil {
		return err
	}
	if rr != nil {
		return m.w.child(read, rr)
	}
	return nil
}

// detail says why a trial came out as it did, for the progress line.
func detail(t trial, refNs float64, deadline time.Duration) string {
	c := t.run
	switch t.outcome {
	case pass:
		return fmt.Sprintf(": %.2f× the reference", c.nsOp/refNs)
	case tooSlow:
		if c.timedOut {
			return fmt.Sprintf(": killed at its %s deadline", deadline.Round(time.Second))
		}
		return fmt.Sprintf(": %.2f× the reference", c.nsOp/refNs)
	case killed:
		if len(c.notes) > 0 {
			return ": " + strings.Join(c.notes, "; ")
		}
		return ": out of memory inside the budget"
	case refused:
		// The suite's reason, without its advice on flags this command
		// leaves alone.
		msg, _, _ := strings.Cut(c.firstError(), ";")
		return ": " + strings.TrimPrefix(msg, "[kvbench] error: ")
	case failed, noBudget:
		return ": " + c.firstError()
	}
	return ""
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
