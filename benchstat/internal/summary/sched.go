package summary

import "strings"

// The scheduler's share of a tail, and the mark that says so:
// docs/methodology.md, "The scheduler's wait".

// schedUnit is the scheduler's p99 wait a leaf reports.
const schedUnit = "sched-p99-ns"

// SchedMark follows a p99 cell whose leaf's scheduler p99 is close to it.
const SchedMark = " *"

// SchedNote explains the mark, once under a table that has one.
const SchedNote = "*: the scheduler's p99 wait (sched-p99-ns) is within 2× of this p99: the tail is of a wait for a CPU, maybe not the engine's"

// schedClose is the rule: the scheduler's p99 from half to twice the
// op's.
func schedClose(sched, op float64) bool { return op > 0 && sched >= op/2 && sched <= 2*op }

// schedBound reports whether k is an operation's p99 series (p99-ns,
// read-p99-ns, update-p99-ns) with a scheduler p99 from the same leaf
// close to its median, op.
func schedBound(r *Results, k Key, op Stat) bool {
	if k.Unit == schedUnit || k.Unit != "p99-ns" && !strings.HasSuffix(k.Unit, "-p99-ns") {
		return false
	}
	k.Unit = schedUnit
	vals := r.Values[k]
	return len(vals) > 0 && schedClose(Of(vals).Center, op.Center)
}
