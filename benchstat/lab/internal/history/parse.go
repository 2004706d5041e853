package history

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/kvbench/kvbench/benchstat/internal/results"
)

// Label is one key: value pair attached to a run.
type Label struct {
	Key, Value string
}

func (l Label) String() string { return l.Key + "=" + l.Value }

// Result is one value of one benchmark line.
type Result struct {
	Seq   int // the benchmark line's position among the file's results, from 0
	Name  string
	Unit  string
	Value float64
	Iters int
}

// File is one benchfmt file, parsed and ready to add.
type File struct {
	Name    string
	Raw     []byte
	Config  []Label // every configuration line in force at a result, each distinct pair once, sorted
	Results []Result
}

// Parse reads one benchfmt file. A syntax error refuses the whole file,
// naming the file and line (benchfmt's "file:line: message"): history
// built from half a file would look complete and be wrong. So is a file
// with no results: there is nothing in it to follow over time.
func Parse(name string, raw []byte) (*File, error) {
	rf, err := results.Read(bytes.NewReader(raw), name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rf.Skipped) > 0 {
		return nil, rf.Skipped[0]
	}
	f := &File{Name: name, Raw: raw}
	seen := map[Label]bool{}
	for seq, res := range rf.Results {
		for _, l := range res.Labels {
			if l := Label(l); !seen[l] {
				seen[l] = true
				f.Config = append(f.Config, l)
			}
		}
		for _, v := range res.Values {
			f.Results = append(f.Results, Result{Seq: seq, Name: "Benchmark" + res.Name, Unit: v.Unit, Value: v.Value, Iters: res.Iters})
		}
	}
	if len(f.Results) == 0 {
		return nil, fmt.Errorf("%s: no benchmark results", name)
	}
	sort.Slice(f.Config, func(i, j int) bool {
		if f.Config[i].Key != f.Config[j].Key {
			return f.Config[i].Key < f.Config[j].Key
		}
		return f.Config[i].Value < f.Config[j].Value
	})
	return f, nil
}
