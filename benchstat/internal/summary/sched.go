package summary

import (
	"maps"
	"slices"
	"strings"
)

// The scheduler's share of a tail: a leaf with more than one goroutine
// reports sched-p99-ns, the p99 of the Go scheduler's wait over its timed
// window, beside its operations' p99 (docs/methodology.md, "The
// scheduler's wait"). Where the two are within a factor of two of each
// other, the op's tail is of the size of a wait for a CPU: the machine's
// queue, not the engine, may well set that figure, and the cell says so.
// A scheduler p99 far above the op's is no mark: those waits (whole time
// slices) fell between operations, or the op's p99 would hold them.

// schedUnit is the scheduler's p99 wait a leaf reports.
const schedUnit = "sched-p99-ns"

// SchedMark follows a p99 cell whose leaf's scheduler p99 is close to it.
const SchedMark = " *"

// SchedNote explains the mark, once under a table that has one.
const SchedNote = "*: the scheduler's p99 wait (sched-p99-ns) is within 2× of this p99: the tail is of a wait for a CPU, maybe not the engine's"

// schedClose is the rule: the scheduler's p99 from half to twice the
// op's.
func schedClose(sched, op float64) bool { return op > 0 && sched >= op/2 && sched <= 2*op }

// isOpP99 says whether unit is an operation's p99 (p99-ns, read-p99-ns,
// update-p99-ns), the cells the mark may follow.
func isOpP99(unit string) bool {
	return unit != schedUnit && (unit == "p99-ns" || strings.HasSuffix(unit, "-p99-ns"))
}

// schedBound reports whether the op p99 series k (its median op) has a
// scheduler p99 from the same leaf close to it.
func schedBound(r *Results, k Key, op Stat) bool {
	if !isOpP99(k.Unit) {
		return false
	}
	k.Unit = schedUnit
	vals := r.Values[k]
	return len(vals) > 0 && schedClose(Of(vals).Center, op.Center)
}

// hasSchedMark says whether any cell of t carries the mark.
func hasSchedMark(t Table) bool {
	return slices.ContainsFunc(t.Rows, func(r Row) bool {
		return slices.ContainsFunc(slices.Collect(maps.Values(r.Cells)), func(c Cell) bool { return c.Sched })
	})
}
