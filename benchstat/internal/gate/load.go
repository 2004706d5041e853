package gate

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	resultsfile "github.com/kvbench/kvbench/benchstat/internal/results"
	"golang.org/x/perf/benchfmt"
)

// Set is every measurement of one side (base or head), grouped by
// benchmark and unit, with the unit metadata its files declared.
type Set struct {
	Values map[Key][]float64
	Units  benchfmt.UnitMetadataMap
	// Gate holds, by benchmark name, the units that carry its result, from
	// the "gate" configuration line the suite prints before each family.
	Gate map[string]string
	// Mode holds, by benchmark name, the "mode" configuration line of its
	// results: "sim" when benchstat/sim counted them.
	Mode map[string]string
}

// Key names one series: a full benchmark name (sub-benchmarks and the
// GOMAXPROCS suffix included) and one of its units, as written.
type Key struct {
	Name, Unit string
}

func (k Key) String() string { return k.Name + " " + k.Unit }

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{Values: map[Key][]float64{}, Units: benchfmt.UnitMetadataMap{}, Gate: map[string]string{}, Mode: map[string]string{}}
}

// ReadFiles reads benchmark results from files into one set.
func ReadFiles(paths ...string) (*Set, error) {
	s := NewSet()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		err = s.Read(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Read adds the results of one benchfmt stream. Syntax errors stop the
// read: a gate that skipped lines could pass on half a file.
func (s *Set) Read(r io.Reader, name string) error {
	f, err := resultsfile.Read(r, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(f.Skipped) > 0 {
		return f.Skipped[0]
	}
	for _, res := range f.Results {
		if g := res.Label("gate"); g != "" {
			s.Gate[res.Name] = g
		}
		if m := res.Label("mode"); m != "" {
			s.Mode[res.Name] = m
		}
		for _, v := range res.Values {
			k := Key{res.Name, v.Unit}
			s.Values[k] = append(s.Values[k], v.Value)
		}
	}
	maps.Copy(s.Units, f.Units)
	return nil
}

// Keys returns the set's series in name, then unit order.
func (s *Set) Keys() []Key {
	return slices.SortedFunc(maps.Keys(s.Values), func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Unit, b.Unit))
	})
}
