// Package summary turns one kvbench results file into short tables that
// answer the questions make bench asks, engines as columns. It reads the
// file with benchfmt and takes medians and their spread from benchmath;
// nothing is scraped from text.
package summary

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"golang.org/x/perf/benchfmt"
)

// Key names one series: every round of one benchmark and unit. Engine is
// empty for benchmarks of no engine (Disk).
type Key struct {
	Op, Engine, Config, Unit string
}

// String is the benchmark and unit a series is of.
func (k Key) String() string {
	n := "Benchmark" + k.Op + k.Engine
	if k.Config != "" {
		n += "/" + k.Config
	}
	return n + " " + k.Unit
}

// Results is one results file by series, with the configuration lines the
// file printed.
type Results struct {
	Name   string
	Values map[Key][]float64
	// Configs lists each sub-benchmark name of an operation in file order.
	Configs map[string][]string
	// Run holds the first value of each configuration line that is the
	// same for the whole run (keys, cpu-model, ...).
	Run map[string]string
	// RunKeys is Run's keys in file order.
	RunKeys []string
	// Settings holds the last settings-<engine> line seen on each
	// engine's results, by engine title.
	Settings map[string]string
	// Skipped counts lines benchfmt could not parse.
	Skipped int
	// Kills are the benchmarks that ended inside their memory budget
	// without a result, from the kill lines of their budget's watcher.
	Kills []Kill
}

// Read parses a results file.
func Read(r io.Reader, name string) (*Results, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	res := &Results{Name: name, Values: map[Key][]float64{}, Configs: map[string][]string{},
		Run: map[string]string{}, Settings: map[string]string{}, Kills: readKills(data)}
	rd := benchfmt.NewReader(bytes.NewReader(data), name)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			res.Skipped++
		case *benchfmt.Result:
			op, eng, cfg, ok := engname.Split(rec.Name)
			if !ok {
				op, cfg = splitPlain(rec.Name)
			}
			res.note(rec, eng)
			if !slices.Contains(res.Configs[op], cfg) {
				res.Configs[op] = append(res.Configs[op], cfg)
			}
			for _, v := range rec.Values {
				unit, val := v.Unit, v.Value
				if v.OrigUnit != "" {
					unit, val = v.OrigUnit, v.OrigValue
				}
				k := Key{op, eng, cfg, unit}
				res.Values[k] = append(res.Values[k], val)
			}
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if len(res.Values) == 0 && len(res.Kills) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results", name)
	}
	return res, nil
}

// note keeps the configuration lines of rec.
func (r *Results) note(rec *benchfmt.Result, eng string) {
	for _, c := range rec.Config {
		if !c.File {
			continue // name-derived keys (.fullname, /threads ...)
		}
		k, v := c.Key, string(c.Value)
		if strings.HasPrefix(k, "settings-") || strings.HasPrefix(k, "fixture-") {
			if eng != "" && strings.HasPrefix(k, "settings-") {
				r.Settings[eng] = v
			}
			continue
		}
		if _, ok := r.Run[k]; !ok && v != "" {
			r.Run[k] = v
			r.RunKeys = append(r.RunKeys, k)
		}
	}
}

// splitPlain is engname.Split for a benchmark of no engine: "Disk" and
// "op=randread-4k/threads=1".
func splitPlain(n benchfmt.Name) (op, config string) {
	base, parts := n.Parts()
	var cfg []string
	for _, p := range parts {
		if p[0] == '/' {
			cfg = append(cfg, string(p[1:]))
		}
	}
	return string(base), strings.Join(cfg, "/")
}
