package gate

import (
	"fmt"
	"io"
	"os"
	"sort"

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
	rd := benchfmt.NewReader(r, name)
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			return rec
		case *benchfmt.Result:
			n := string(rec.Name)
			if g := rec.GetConfig("gate"); g != "" {
				s.Gate[n] = g
			}
			if m := rec.GetConfig("mode"); m != "" {
				s.Mode[n] = m
			}
			for _, v := range rec.Values {
				unit, val := v.Unit, v.Value
				if v.OrigUnit != "" {
					unit, val = v.OrigUnit, v.OrigValue
				}
				k := Key{n, unit}
				s.Values[k] = append(s.Values[k], val)
			}
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for k, v := range rd.Units() {
		s.Units[k] = v
	}
	return nil
}

// Keys returns the set's series in name, then unit order.
func (s *Set) Keys() []Key {
	ks := make([]Key, 0, len(s.Values))
	for k := range s.Values {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Name != ks[j].Name {
			return ks[i].Name < ks[j].Name
		}
		return ks[i].Unit < ks[j].Unit
	})
	return ks
}

// modeOf is the mode that produced name's results: "sim" or "time".
func (s *Set) modeOf(name string) string {
	if m := s.Mode[name]; m != "" {
		return m
	}
	return "time"
}
