package charts

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"github.com/kvbench/kvbench/benchstat/internal/results"
)

// Results holds the values of each series and the order things came in.
type Results struct{ results.Series }

// ReadResults reads the per-engine results of a results file.
func ReadResults(r io.Reader, name string) (*Results, error) {
	f, err := results.Read(r, name)
	if err != nil {
		return nil, err
	}
	for _, e := range f.Skipped {
		// As benchstat does: say so and go on. A progress line that
		// landed inside a result line costs that one result.
		fmt.Fprintf(os.Stderr, "charts: skipping %v\n", e)
	}
	res := &Results{f.Series(func(r *results.Result) bool { return r.Engine != "" })}
	res.spanBlocks()
	return res, nil
}

// spanBlocks shows an engine without data blocks (a B-tree: its leaves
// have no block=) beside the LSMs at each of their block sizes: a
// sub-benchmark c that has c/block=<size> siblings hands its series to
// each of them and leaves the chart, as the summary shows it on each row.
func (r *Results) spanBlocks() {
	for _, op := range r.Ops {
		var keep []string
		moved := map[string][]string{} // c -> its c/block=... siblings
		for _, c := range r.Configs[op] {
			if _, ok := results.SplitConfig(c).Get("block"); ok {
				keep = append(keep, c)
				continue
			}
			for _, d := range r.Configs[op] {
				if ps := results.SplitConfig(d); len(ps) > 1 && ps[len(ps)-1].Key == "block" && ps[:len(ps)-1].String() == c {
					moved[c] = append(moved[c], d)
				}
			}
			if len(moved[c]) == 0 {
				keep = append(keep, c)
			}
		}
		if len(moved) == 0 {
			continue
		}
		for k, vals := range r.Values {
			if ds := moved[k.Config]; k.Op == op && len(ds) > 0 {
				delete(r.Values, k)
				for _, k.Config = range ds {
					r.Values[k] = vals
				}
			}
		}
		r.Configs[op] = keep
	}
}

// engines lists the engines that reported unit for op, in the suite's
// order (engname.Titles); any other engine in the results follows, by
// name, rather than being left out.
func (r *Results) engines(op, unit string) []string {
	reported := r.Distinct(func(k results.Key) string { return k.Engine }, func(k results.Key) bool { return k.Op == op && k.Unit == unit })
	suite := slices.DeleteFunc(engname.Titles(), func(e string) bool { return !slices.Contains(reported, e) })
	return append(suite, slices.DeleteFunc(reported, func(e string) bool { return slices.Contains(suite, e) })...)
}

// labels shortens sub-benchmark names to the parts that differ between
// them, and returns the parts they share.
func labels(configs []string) (short []string, common string) {
	split := make([]results.Parts, len(configs))
	count := map[results.Part]int{}
	for i, c := range configs {
		split[i] = results.SplitConfig(c)
		for _, p := range split[i] {
			count[p]++
		}
	}
	everywhere := func(p results.Part) bool { return count[p] == len(configs) }
	for _, parts := range split {
		short = append(short, slices.DeleteFunc(slices.Clone(parts), everywhere).Join(" "))
	}
	if len(split) > 0 {
		common = slices.DeleteFunc(split[0], func(p results.Part) bool { return !everywhere(p) }).Join(" ")
	}
	return short, common
}

// units lists the units reported for op, sorted.
func (r *Results) units(op string) []string {
	return r.Distinct(func(k results.Key) string { return k.Unit }, func(k results.Key) bool { return k.Op == op })
}
