package charts

import (
	"maps"
	"slices"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"github.com/kvbench/kvbench/benchstat/internal/results"
	ksummary "github.com/kvbench/kvbench/benchstat/internal/summary"
)

// budgetOp is the operation whose memory-budget results (a mem= part in
// the name) get a chart of their own: a few thousand ops/s, beside warm
// reads of millions, would not show on the warm reads' axis.
const budgetOp = "ReadRandom"

// Budget is the summary's memory-budget row as the budget chart draws it:
// ops/s per engine, one group per combination of what the row varies.
type Budget struct {
	Title  string   // the summary section's
	Common string   // name parts every group shares
	Groups []string // what tells the groups apart; one "" for a single group
	// Engines are the section's engine columns, in the suite's order. An
	// engine the summary lists without an ops/s figure in a group (its
	// budget killed it) is drawn as "no result", not left out.
	Engines []string
	Ops     map[string][]ksummary.Stat // by engine, one per group; N == 0: no result
	// Disk is the disk's own one-thread 4 KiB random-read rate, nil
	// when the results have none.
	Disk *ksummary.Stat
}

// BudgetOf finds the memory-budget row in s: the table whose ops/s rows
// are ReadRandom sub-benchmarks with a mem= part. ok is false when the
// results have no such row.
func BudgetOf(s *ksummary.Summary) (b Budget, ok bool) {
	for _, t := range s.Tables {
		b = Budget{Title: t.Title, Common: t.Common, Ops: map[string][]ksummary.Stat{},
			Engines: slices.DeleteFunc(slices.Clone(t.Columns), func(c string) bool { return !slices.Contains(engname.Titles(), c) })}
		for _, row := range t.Rows {
			if row.Unit != "ops/s" || !slices.ContainsFunc(slices.Collect(maps.Values(row.Cells)), func(c ksummary.Cell) bool {
				return c.Src.Op == budgetOp && c.Src.Engine != "" && hasMem(c.Src.Config)
			}) {
				continue
			}
			group := strings.TrimPrefix(row.Label, ksummary.DisplayOf(row.Unit).Label)
			b.Groups = append(b.Groups, strings.TrimSpace(group))
			for _, e := range b.Engines {
				b.Ops[e] = append(b.Ops[e], row.Cells[e].Stat) // the zero Stat where none
			}
		}
		if len(b.Groups) > 0 {
			for _, c := range s.Results.Configs["Disk"] {
				v := s.Results.Values[ksummary.Key{Op: "Disk", Config: c, Unit: "ops/s"}]
				if len(v) > 0 && results.SplitConfig(c).Match([]string{"op=randread-4k", "threads=1"}) {
					st := ksummary.Of(v)
					b.Disk = &st
					break
				}
			}
			return b, true
		}
	}
	return Budget{}, false
}

// hasMem reports whether a sub-benchmark name has a mem= part.
func hasMem(config string) bool {
	return results.SplitConfig(config).Match([]string{"mem"})
}
