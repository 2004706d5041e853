package workload

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The operations of a mixed workload, as YCSB names them, and db_bench's
// delete. An update writes the whole value (the suite's records are one
// value, not YCSB's ten fields): a blind put, as pebble bench ycsb's, or
// with -update read a read then the put, as YCSB's key-value bindings
// do; rmw is a read then a write of the same key, timed as one
// operation, as YCSB's read-modify-write is.
type ycsbOp int

const (
	opRead ycsbOp = iota
	opUpdate
	opInsert
	opScan
	opRMW
	opDelete
	numOps
)

var opNames = [numOps]string{"read", "update", "insert", "scan", "rmw", "delete"}

// opMix is each operation's share of a workload's operations, in percent.
type opMix [numOps]float64

// writes says whether any operation of the mix writes.
func (m opMix) writes() bool {
	return m[opUpdate]+m[opInsert]+m[opRMW]+m[opDelete] > 0
}

func (m opMix) String() string {
	var parts []string
	for op, p := range m {
		if p > 0 {
			parts = append(parts, opNames[op]+"="+strconv.FormatFloat(p, 'f', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

// cum is the mix's cumulative shares, from 0 to 1, as pick reads them:
// the share rounding leaves over goes to the last operation the mix
// names, so an operation with no share never runs.
func (m opMix) cum() [numOps]float64 {
	var c [numOps]float64
	var acc float64
	last := opRead
	for op, share := range m {
		acc += share / 100
		c[op] = acc
		if share > 0 {
			last = ycsbOp(op)
		}
	}
	for op := last; op < numOps; op++ {
		c[op] = 2 // past any draw
	}
	return c
}

// parseMix reads -mix: op=percent pairs that add up to 100.
func parseMix(s string) (opMix, error) {
	var m opMix
	var sum float64
	for _, f := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return m, fmt.Errorf("%q is not op=percent", f)
		}
		op := ycsbOp(-1)
		for i, n := range opNames {
			if n == name {
				op = ycsbOp(i)
			}
		}
		if op < 0 {
			return m, fmt.Errorf("unknown operation %q (have %s)", name, strings.Join(opNames[:], ", "))
		}
		p, err := strconv.ParseFloat(val, 64)
		if err != nil || !(p >= 0 && p <= 100) {
			return m, fmt.Errorf("%s=%s: the share must be a percentage from 0 to 100", name, val)
		}
		if m[op] != 0 {
			return m, fmt.Errorf("%s is listed twice", name)
		}
		m[op] = p
		sum += p
	}
	if sum < 99.999 || sum > 100.001 {
		return m, fmt.Errorf("the shares add up to %g, not 100", sum)
	}
	if m[opRead]+m[opScan]+m[opRMW] == 0 {
		return m, errors.New("the mix reads nothing, so nothing it wrote is verified")
	}
	return m, nil
}

// ycsbSpec is one workload: YCSB's core workloads A-F as its workload
// files define them (recordcount aside), db_bench's readwhilewriting, or
// the -mix of the command line.
type ycsbSpec struct {
	Name string
	Mix  opMix
	Dist string // the workload's own request distribution
	// Uniform also runs it over uniform keys by default: the baseline
	// that shows what skew changed (A and C).
	Uniform bool
	// Background is readwhilewriting's: the mix is its readers', and one
	// more goroutine writes at -rww_write_rate, not counted in ops/s.
	Background bool
}

var ycsbSpecs = []ycsbSpec{
	{Name: "A", Mix: opMix{opRead: 50, opUpdate: 50}, Dist: "zipf", Uniform: true},
	{Name: "B", Mix: opMix{opRead: 95, opUpdate: 5}, Dist: "zipf"},
	{Name: "C", Mix: opMix{opRead: 100}, Dist: "zipf", Uniform: true},
	{Name: "D", Mix: opMix{opRead: 95, opInsert: 5}, Dist: "latest"},
	{Name: "E", Mix: opMix{opScan: 95, opInsert: 5}, Dist: "zipf"},
	{Name: "F", Mix: opMix{opRead: 50, opRMW: 50}, Dist: "zipf"},
	{Name: "readwhilewriting", Mix: opMix{opRead: 100}, Dist: "zipf", Background: true},
}

// ycsbMaxScan is YCSB's maxscanlength: a scan reads a uniform 1 to 100
// records from its start key (scanlengthdistribution=uniform).
const ycsbMaxScan = 100

// ownWrites is how many of its own latest writes a goroutine remembers,
// by key: a later read of such a key must see that write or a newer one.
const ownWrites = 1024
