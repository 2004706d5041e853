// Package results reads kvbench results files: go test -bench output in
// the Go benchmark format, read with golang.org/x/perf's benchfmt. Each
// result is named as the suite names it, projected from the benchmark
// name with benchproc: its operation, its engine, and its configuration,
// the name's key=value parts. Values keep the units the file wrote
// (ns/op, not benchfmt's sec/op). The gate, the summary, the report, the
// charts and the history read results files and name parts here only.
package results

import (
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"
)

// Benchstat is x/perf's benchstat command, which the summary and kvb
// compare run as go run Benchstat, at the version go.mod pins: go tool
// benchstat would build it, and the standard library under it, with
// flags of its own rather than the build's (GOFLAGS), once more in a
// fresh cache.
const Benchstat = "golang.org/x/perf/cmd/benchstat"

// File is one results file.
type File struct {
	Name    string
	Results []Result // in file order
	Units   benchfmt.UnitMetadataMap
	// Skipped are the lines benchfmt could not parse (*benchfmt.SyntaxError,
	// "file:line: message"), in file order.
	Skipped []error
}

// Result is one benchmark line.
type Result struct {
	Name   string // as written, less "Benchmark": "ReadRandomBadger/valsz=1024/threads=1-2"
	Op     string // "ReadRandom"; a benchmark of no engine is all operation ("Disk")
	Engine string // "Badger"; "" for a benchmark of no engine
	Config string // the name's key=value parts, GOMAXPROCS left out: "valsz=1024/threads=1"
	Iters  int
	Values []Value
	// Labels are the file's configuration lines in force at the result,
	// in the order they came.
	Labels []Label
	Line   int // its line in the file, from 1
}

// Value is one measurement, in the unit the file wrote.
type Value struct {
	Unit  string
	Value float64
}

// Label is one configuration line: "keys: 100000".
type Label struct{ Key, Value string }

// Value is r's value in unit, as the file wrote it (ns/op).
func (r *Result) Value(unit string) (float64, bool) {
	for _, v := range r.Values {
		if v.Unit == unit {
			return v.Value, true
		}
	}
	return 0, false
}

// Label is the value of the configuration line key in force at r, "" if
// none.
func (r *Result) Label(key string) string {
	for _, l := range r.Labels {
		if l.Key == key {
			return l.Value
		}
	}
	return ""
}

// Read reads one results file. Lines benchfmt cannot parse are skipped
// and kept in Skipped: a caller that must not act on half a file refuses
// it; the error is the reader's only.
func Read(r io.Reader, name string) (*File, error) {
	f := &File{Name: name}
	rd := benchfmt.NewReader(r, name)
	n := newNamer()
	var labels []Label
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			f.Skipped = append(f.Skipped, rec)
		case *benchfmt.Result:
			if !slices.EqualFunc(labels, rec.Config, func(l Label, c benchfmt.Config) bool { return l.Key == c.Key && l.Value == string(c.Value) }) {
				labels = nil
				for _, c := range rec.Config {
					labels = append(labels, Label{c.Key, string(c.Value)})
				}
			}
			res := Result{Name: string(rec.Name), Iters: rec.Iters, Labels: labels}
			_, res.Line = rec.Pos()
			res.Op, res.Engine, res.Config = n.split(rec)
			for _, v := range rec.Values {
				if v.OrigUnit != "" { // benchfmt's tidied unit: sec/op for ns/op
					v.Unit, v.Value = v.OrigUnit, v.OrigValue
				}
				res.Values = append(res.Values, Value{v.Unit, v.Value})
			}
			f.Results = append(f.Results, res)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	f.Units = rd.Units()
	return f, nil
}

// Key names a series: every value of one operation, engine,
// configuration and unit.
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

// Series are values grouped by Key, with the order things came in.
type Series struct {
	Values  map[Key][]float64
	Ops     []string            // operations, in file order
	Configs map[string][]string // each operation's configurations, in file order
}

// Series groups the results keep admits; nil keeps them all.
func (f *File) Series(keep func(*Result) bool) Series {
	s := Series{Values: map[Key][]float64{}, Configs: map[string][]string{}}
	for i := range f.Results {
		r := &f.Results[i]
		if keep != nil && !keep(r) {
			continue
		}
		if _, seen := s.Configs[r.Op]; !seen {
			s.Ops = append(s.Ops, r.Op)
		}
		if !slices.Contains(s.Configs[r.Op], r.Config) {
			s.Configs[r.Op] = append(s.Configs[r.Op], r.Config)
		}
		for _, v := range r.Values {
			k := Key{r.Op, r.Engine, r.Config, v.Unit}
			s.Values[k] = append(s.Values[k], v.Value)
		}
	}
	return s
}

// Distinct is the values of field over the series keys keep admits,
// sorted.
func (s Series) Distinct(field func(Key) string, keep func(Key) bool) []string {
	seen := map[string]bool{}
	for k := range s.Values {
		if keep(k) {
			seen[field(k)] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Split parses a benchmark name, less "Benchmark", as Result names it:
// "ReadRandomBadger/valsz=1024/threads=1-2" is the operation
// "ReadRandom", the engine "Badger" and the configuration
// "valsz=1024/threads=1".
func Split(name string) (op, engine, config string) {
	return newNamer().split(&benchfmt.Result{Name: benchfmt.Name(name)})
}

// namer projects a benchmark name onto its base name ("ReadRandomBadger")
// and its full name less the base and the GOMAXPROCS suffix
// ("*/valsz=1024/threads=1").
type namer struct {
	proj         *benchproc.Projection
	base, config *benchproc.Field
}

func newNamer() namer {
	var p benchproc.ProjectionParser
	proj, err := p.Parse(".name,.fullname,/gomaxprocs", nil)
	if err != nil {
		panic(err)
	}
	fs := proj.Fields()
	return namer{proj, fs[0], fs[1]}
}

func (n namer) split(r *benchfmt.Result) (op, engine, config string) {
	k := n.proj.Project(r)
	base := k.Get(n.base)
	config = strings.TrimPrefix(strings.TrimPrefix(k.Get(n.config), "*"), "/")
	if op, engine, ok := engname.Cut(base); ok {
		return op, engine, config
	}
	return base, "", config
}

// Part is one key=value part of a configuration.
type Part struct{ Key, Value string }

// Parts are a configuration's parts, in order.
type Parts []Part

// SplitConfig splits a configuration, "valsz=1024/threads=1", into its
// parts. A part with no "=" is a key with an empty value.
func SplitConfig(config string) Parts {
	var out Parts
	for _, p := range strings.Split(config, "/") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		out = append(out, Part{k, v})
	}
	return out
}

// String joins the parts into a configuration again, as SplitConfig
// read it.
func (ps Parts) String() string { return ps.Join("/") }

// Join is the parts, "key=value" or a bare "key", joined by sep.
func (ps Parts) Join(sep string) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		if s[i] = p.Key; p.Value != "" {
			s[i] += "=" + p.Value
		}
	}
	return strings.Join(s, sep)
}

// Without is ps less the parts named key.
func (ps Parts) Without(key string) Parts {
	return slices.DeleteFunc(slices.Clone(ps), func(p Part) bool { return p.Key == key })
}

// Get is the value of the first part named key.
func (ps Parts) Get(key string) (string, bool) {
	for _, p := range ps {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Match reports whether ps passes every filter: "key=value" must be
// among the parts, "key" must be there with any value, "!key" must be
// absent.
func (ps Parts) Match(filters []string) bool {
	for _, f := range filters {
		key, present := FilterKey(f)
		got, has := ps.Get(key)
		if _, want, exact := strings.Cut(f, "="); has != present || present && exact && got != want {
			return false
		}
	}
	return true
}

// FilterKey is the key a filter of Match names, and whether the filter
// asks for it to be there ("key", "key=value") or absent ("!key").
func FilterKey(f string) (key string, present bool) {
	f, absent := strings.CutPrefix(f, "!")
	key, _, _ = strings.Cut(f, "=")
	return key, !absent
}

// WithEngineKey copies a results file from r to w with each engine moved
// from the benchmark name into an engine= key
// ("ReadRandom/engine=Badger/valsz=1024-2"), so that benchstat can put
// engines in columns, and returns how many results it renamed.
func WithEngineKey(r io.Reader, name string, w io.Writer) (int, error) {
	rd := benchfmt.NewReader(r, name)
	wr := benchfmt.NewWriter(w)
	renamed := 0
	for rd.Scan() {
		rec := rd.Result()
		if res, ok := rec.(*benchfmt.Result); ok {
			if nn, ok := engname.EngineName(res.Name); ok {
				res.Name = nn
				renamed++
			}
		}
		if err := wr.Write(rec); err != nil {
			return renamed, err
		}
	}
	return renamed, rd.Err()
}
