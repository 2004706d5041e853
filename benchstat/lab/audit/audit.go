// Package audit is kvb audit: it measures which engine settings decide
// a rank. make bench's rows are run for each engine at the suite's
// settings (the baseline) and again with one setting of that engine
// flipped (settings.go), one process per engine, setting and row group,
// the rounds interleaved. It then states, per setting, the rows it moves,
// the median change and whether the engine's rank among the engines
// changes on any row; a setting that moves a row by more than 1.5x and
// changes a rank there decides a rank (docs/engines.md, "Rank-sensitivity
// audit").
//
//	results/kvb-lab audit -bin results/kvbench.test [-rounds 3] [-dir D] [-o results/audit]
//	    [-doc docs/engines.md] [-only Badger,Pebble]
//	results/kvb-lab audit -analyze results/audit [-doc docs/engines.md]
//
// The raw results go to -o, one benchfmt file per baseline and setting
// (base-<engine>.txt, <engine>-<n>.txt), so -analyze can redo the table
// without running anything. -doc rewrites the table between the
// <!-- audit:begin --> and <!-- audit:end --> lines of that file.
package audit

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/lab/internal/stores"
)

// Command is kvb audit.
var Command = cli.New(cli.Spec[*options]{
	Name:    "audit",
	Summary: "which engine settings decide a rank: make bench's rows with each engine setting flipped",
	Usage:   usage,
	Flags:   flags,
	Run:     run,
})

const usage = `usage: kvb audit -bin results/kvbench.test [-rounds 3] [-dir D] [-o results/audit] [-doc docs/engines.md] [-only Badger,Pebble]
       kvb audit -analyze results/audit [-doc docs/engines.md]

Runs make bench's rows for each engine at the suite's settings and with
each setting of benchstat/lab/audit/settings.go flipped, rounds interleaved,
and prints the table of what each setting moves (docs/engines.md,
"Rank-sensitivity audit"); -doc rewrites it there. Exit status: 0 done,
2 bad usage or a failed step.

`

// options are audit's flags.
type options struct {
	bin, dir, out, analyze, doc, only, keys, valsz string
	rounds                                         int
}

func flags(fs *flag.FlagSet) *options {
	o := &options{}
	fs.StringVar(&o.bin, "bin", "", "the suite's test binary (kvb build writes results/kvbench.test)")
	fs.IntVar(&o.rounds, "rounds", 3, "interleaved rounds; each row's figure is the median over them")
	fs.StringVar(&o.dir, "dir", "", "the suite's -dir (fixtures)")
	fs.StringVar(&o.out, "o", "results/audit", "directory for the raw results")
	fs.StringVar(&o.analyze, "analyze", "", "only build the table from the raw results in this directory")
	fs.StringVar(&o.doc, "doc", "", "Markdown file whose audit table (between <!-- audit:begin --> and <!-- audit:end -->) is rewritten")
	fs.StringVar(&o.only, "only", "", "comma-separated engine titles to audit (default: every engine in the binary)")
	fs.StringVar(&o.keys, "keys_mil", "0.1", "the suite's -keys_mil (make bench's)")
	fs.StringVar(&o.valsz, "valsz", "1024", "the suite's -valsz (make bench's)")
	return o
}

func run(c cli.Call, o *options, pos []string) int {
	if len(pos) > 0 {
		return c.Usage("unexpected argument %q", pos[0])
	}
	if o.analyze == "" && o.bin == "" {
		return c.Usage("-bin is required (or -analyze DIR)")
	}
	if o.analyze == "" && o.rounds < 1 {
		return c.Usage("-rounds must be at least 1")
	}
	if err := audit(o, c.Stdout, c.Stderr); err != nil {
		fmt.Fprintln(c.Stderr, "kvb audit:", err)
		return 2
	}
	return 0
}

// audit runs the rounds (unless -analyze), prints the table and, with
// -doc, writes it there.
func audit(o *options, stdout, stderr io.Writer) error {
	rawDir := o.analyze
	if rawDir == "" {
		engines, err := stores.InBinary(o.bin, "Open")
		if err != nil {
			return err
		}
		if o.only != "" {
			if engines, err = pick(engines, strings.Split(o.only, ",")); err != nil {
				return err
			}
		}
		r := runner{bin: o.bin, out: o.out, rounds: o.rounds, log: stderr,
			common: []string{"-test.run", "^$", "-test.count", "1", "-keys_mil", o.keys, "-valsz", o.valsz}}
		if o.dir != "" {
			r.common = append(r.common, "-dir", o.dir)
		}
		if err := r.run(engines); err != nil {
			return err
		}
		rawDir = o.out
	}
	res, err := load(rawDir)
	if err != nil {
		return err
	}
	table := res.markdown(stderr)
	if _, err := io.WriteString(stdout, table); err != nil {
		return err
	}
	if o.doc != "" {
		return rewriteDoc(o.doc, table)
	}
	return nil
}

func pick(have, want []string) ([]string, error) {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return nil, fmt.Errorf("-only %s: the binary has %s", w, strings.Join(have, ", "))
		}
	}
	return want, nil
}

type runner struct {
	bin, out string
	rounds   int
	common   []string
	log      io.Writer // progress, and the test binary's stderr
}

// A job is one process: an engine's row group, at the baseline or with a
// setting flipped; file is its raw results file.
type job struct {
	file  string
	title string
	g     group
	flip  []string
}

func (r runner) jobs(engines []string) []job {
	gs := groups(threadList())
	used := map[string]bool{}
	for _, s := range settings {
		for _, g := range s.groups {
			used[g] = true
		}
	}
	names := make([]string, 0, len(used))
	for g := range used {
		names = append(names, g)
	}
	slices.Sort(names)
	var js []job
	for _, e := range engines {
		for _, g := range names {
			js = append(js, job{file: "base-" + e + ".txt", title: e, g: gs[g]})
		}
		for i, s := range settings {
			if s.engine != e {
				continue
			}
			for _, g := range s.groups {
				js = append(js, job{file: settingFile(i), title: e, g: gs[g], flip: s.flip})
			}
		}
	}
	return js
}

func settingFile(i int) string { return "setting-" + strconv.Itoa(i) + ".txt" }

// threadList is make bench's THREADS: 1 and the CPU count.
func threadList() string {
	if n := runtime.NumCPU(); n > 1 {
		return "1," + strconv.Itoa(n)
	}
	return "1"
}

func (r runner) run(engines []string) error {
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		return err
	}
	js := r.jobs(engines)
	files := map[string]bool{}
	for _, j := range js {
		files[j.file] = true
	}
	// A rerun replaces the files an earlier audit wrote, and nothing else.
	for f := range files {
		p := filepath.Join(r.out, f)
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(b, []byte("audit-engine: ")) {
			return fmt.Errorf("%s exists and is not an audit's results file; choose another -o", p)
		}
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	for _, j := range js {
		if err := writeHeader(filepath.Join(r.out, j.file), j); err != nil {
			return err
		}
	}
	start, startLoad := time.Now(), loadavg()
	fmt.Fprintf(r.log, "kvb audit: %d processes x %d rounds, load %s\n", len(js), r.rounds, startLoad)
	for round := 1; round <= r.rounds; round++ {
		for k, j := range js {
			args := append(slices.Clone(r.common), "-test.bench", fmt.Sprintf(j.g.bench, j.title))
			args = append(append(args, j.g.args...), j.flip...)
			fmt.Fprintf(r.log, "kvb audit: round %d/%d, %d/%d: %s %s %s\n", round, r.rounds, k+1, len(js), j.title, j.g.name, strings.Join(j.flip, " "))
			var stdout bytes.Buffer
			cmd := exec.Command(r.bin, args...)
			cmd.Stdout, cmd.Stderr = &stdout, r.log
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s %s: %w\n%s", r.bin, strings.Join(args, " "), err, stdout.String())
			}
			f, err := os.OpenFile(filepath.Join(r.out, j.file), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			_, err = f.Write(stdout.Bytes())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
	meta := fmt.Sprintf("date %s\nduration %s\nload-start %s\nload-end %s\ncpus %d\nrounds %d\n",
		start.UTC().Format("2006-01-02 15:04 MST"), time.Since(start).Round(time.Second), startLoad, loadavg(), runtime.NumCPU(), r.rounds)
	return os.WriteFile(filepath.Join(r.out, "meta.txt"), []byte(meta), 0o644)
}

// writeHeader starts a setting's file with configuration lines naming
// the setting, so the table never depends on the order of settings.go.
func writeHeader(path string, j job) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if j.flip == nil {
		return os.WriteFile(path, []byte("audit-engine: "+j.title+"\naudit-setting: "+baseline+"\n\n"), 0o644)
	}
	for _, s := range settings {
		if s.engine == j.title && slices.Equal(s.flip, j.flip) {
			h := fmt.Sprintf("audit-engine: %s\naudit-setting: %s\naudit-flags: %s\n\n", s.engine, s.name, strings.Join(s.flip, " "))
			return os.WriteFile(path, []byte(h), 0o644)
		}
	}
	return fmt.Errorf("no setting %s %v", j.title, j.flip)
}

// loadavg is /proc/loadavg's 1-minute figure.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}
