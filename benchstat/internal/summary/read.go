// Package summary turns one kvbench results file into short tables that
// answer the questions make bench asks, engines as columns, and is kvb
// summary. It reads the file with benchstat/internal/results and takes
// medians and their spread from benchmath; nothing is scraped from text.
// With -benchstat it renames ReadRandomBadger/valsz=1024 to
// ReadRandom/engine=Badger/valsz=1024 and hands the file to benchstat
// for one column per engine, every unit.
package summary

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/results"
)

// Key names one series: every round of one benchmark and unit. Engine is
// empty for benchmarks of no engine (Disk).
type Key = results.Key

// Results is one results file by series, with the configuration lines the
// file printed.
type Results struct {
	Name string
	results.Series
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

// Read parses a results file, data, read from name.
func Read(data []byte, name string) (*Results, error) {
	f, err := results.Read(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	res := &Results{Name: name, Series: f.Series(nil),
		Run: map[string]string{}, Settings: map[string]string{}, Skipped: len(f.Skipped), Kills: readKills(data)}
	for _, rec := range f.Results {
		for _, l := range rec.Labels {
			switch k, v := l.Key, l.Value; {
			case strings.HasPrefix(k, "settings-"):
				if rec.Engine != "" {
					res.Settings[rec.Engine] = v
				}
			case strings.HasPrefix(k, "fixture-"): // a fixture's, not the run's
			case res.Run[k] == "" && v != "":
				res.Run[k] = v
				res.RunKeys = append(res.RunKeys, k)
			}
		}
	}
	if len(res.Values) == 0 && len(res.Kills) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results", name)
	}
	return res, nil
}
