package charts

import (
	"cmp"
	"slices"
)

// throughputUnits are tried in order; an operation is drawn in the first
// it reports.
var throughputUnits = []string{"ops/s", "keys/s", "commits/s", "MB/s", "ns/op"}

// DrawAll writes every chart of r into dir and returns the files written.
func DrawAll(r *Results, dir string) ([]string, error) {
	var files []string
	for _, op := range r.Ops {
		units := r.units(op)
		configs := r.Configs[op] // less the memory-budget ones, which BudgetChart draws on an axis of their own
		if op == budgetOp {
			configs = slices.DeleteFunc(slices.Clone(configs), hasMem)
		}
		if i := slices.IndexFunc(throughputUnits, func(u string) bool { return slices.Contains(units, u) }); i >= 0 && len(configs) > 0 {
			f, err := throughputChart(r, op, configs, throughputUnits[i], dir)
			if err != nil {
				return files, err
			}
			files = append(files, f)
		}
		lat := slices.DeleteFunc(units, func(u string) bool { _, ok := percentileOrder(u); return !ok })
		if len(lat) == 0 {
			continue
		}
		slices.SortFunc(lat, func(a, b string) int {
			x, _ := percentileOrder(a)
			y, _ := percentileOrder(b)
			return cmp.Compare(x, y)
		})
		short, _ := labels(r.Configs[op])
		for i, c := range r.Configs[op] {
			f, err := latencyChart(r, op, c, short[i], lat, dir)
			if err != nil {
				return files, err
			}
			files = append(files, f)
		}
	}
	return files, nil
}

// Merge adds o's runs to r.
func (r *Results) Merge(o *Results) {
	for _, op := range o.Ops {
		if _, ok := r.Configs[op]; !ok {
			r.Ops = append(r.Ops, op)
		}
		for _, c := range o.Configs[op] {
			if !slices.Contains(r.Configs[op], c) {
				r.Configs[op] = append(r.Configs[op], c)
			}
		}
	}
	for k, v := range o.Values {
		r.Values[k] = append(r.Values[k], v...)
	}
}
