package power

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/aclements/go-moremath/stats"

	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

// comparisons runs kvb compare, one comparison at a time, into dir.
type comparisons struct {
	dir    string
	kvb    string // the suite's tooling, built once: its compare runs every comparison
	stderr io.Writer
}

type result struct {
	dir    string
	exit   int
	failed []string // benchmark unit of each REGRESSION or MISSING row
	load   string
}

// buildKvb builds the program whose compare runs each comparison: a
// process of its own, as each needs its own environment
// (KVBENCH_SLOWDOWN).
func (m *comparisons) buildKvb() error {
	if out, err := exec.Command("go", "build", "-o", m.kvb, "./benchstat/kvb").CombinedOutput(); err != nil {
		return fmt.Errorf("build kvb: %v\n%s", err, out)
	}
	return nil
}

// buildSuite builds the suite's test binary with tags, and with the
// files of an -overlay laid over it unless overlay is "".
func (m *comparisons) buildSuite(out, tags, overlay string) error {
	fmt.Fprintf(m.stderr, "kvb power: building %s (tags %q)\n", filepath.Base(out), tags)
	args := []string{"test", "-c", "-tags", tags, "-o", out}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = m.stderr, m.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build %s: %v", out, err)
	}
	return nil
}

// compare runs kvb compare on two prebuilt binaries.
func (m *comparisons) compare(name, base, head string, env, args []string) (result, error) {
	res := result{dir: filepath.Join(m.dir, name), load: load1()}
	cmd := exec.Command(m.kvb, append([]string{"compare", base, head, "-o", res.dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	log, err := os.Create(filepath.Join(m.dir, name+".log"))
	if err != nil {
		return res, err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		res.exit = ee.ExitCode()
	} else if err != nil {
		return res, fmt.Errorf("%s: %v", name, err)
	}
	if res.exit != 0 && res.exit != 1 {
		return res, fmt.Errorf("%s: kvb compare exit %d; see %s.log", name, res.exit, filepath.Join(m.dir, name))
	}
	j, err := os.Open(filepath.Join(res.dir, "gate.json"))
	if err != nil {
		return res, fmt.Errorf("%s: %v", name, err)
	}
	defer j.Close()
	if res.failed, err = failedRows(j); err != nil {
		return res, fmt.Errorf("%s: %v", name, err)
	}
	fmt.Fprintf(m.stderr, "kvb power: %s: gate exit %d in %.0fs, load %s %v\n", name, res.exit, time.Since(start).Seconds(), res.load, res.failed)
	return res, nil
}

// failedRows reads gate.json (gate.Report): "benchmark unit" of each
// series that failed the gate in any mode.
func failedRows(r io.Reader) ([]string, error) {
	var rep gate.Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("gate.json: %w", err)
	}
	var out []string
	for _, m := range rep.Modes {
		for _, f := range m.Failures {
			out = append(out, f.Name+" "+f.Unit)
		}
	}
	return out, nil
}

// slowedRead reports whether a failed series is the read of an engine
// this run slowed on purpose.
func slowedRead(failed string, slowed []string) bool {
	for _, eng := range slowed {
		if strings.HasPrefix(failed, "ReadRandom"+eng+"/") {
			return true
		}
	}
	return false
}

// series reads the values of unit by benchmark name, in file order, as
// the gate reads them.
func series(path, unit string) (map[string][]float64, error) {
	set, err := gate.ReadFiles(path)
	if err != nil {
		return nil, err
	}
	out := map[string][]float64{}
	for k, v := range set.Values {
		if k.Unit == unit {
			out[k.Name] = v
		}
	}
	return out, nil
}

var readRandom = regexp.MustCompile(`^ReadRandom([A-Za-z]+)/`)

// perRead is each engine's median unit per read in a results file.
func perRead(path, unit string) (map[string]float64, error) {
	s, err := series(path, unit)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for name, v := range s {
		if m := readRandom.FindStringSubmatch(name); m != nil {
			out[m[1]] = stats.Sample{Xs: v}.Quantile(0.5)
		}
	}
	return out, nil
}

// unitChange is the median per-round change of eng's unit, in percent.
func unitChange(dir, eng, unit string) (float64, error) {
	b, err := series(filepath.Join(dir, "base.txt"), unit)
	if err != nil {
		return 0, err
	}
	h, err := series(filepath.Join(dir, "head.txt"), unit)
	if err != nil {
		return 0, err
	}
	var ratios []float64
	for name, bv := range b {
		if m := readRandom.FindStringSubmatch(name); m == nil || m[1] != eng {
			continue
		}
		for i := 0; i < min(len(bv), len(h[name])); i++ {
			ratios = append(ratios, h[name][i]/bv[i])
		}
	}
	if len(ratios) == 0 {
		return 0, nil
	}
	return 100 * (stats.Sample{Xs: ratios}.Quantile(0.5) - 1), nil
}
