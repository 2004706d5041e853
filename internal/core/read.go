package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/measure"
)

// ScanAll iterates over every key, checking that keys ascend and each key
// (and value) is the data set's, and returns the keys and bytes it read.
func ScanAll(db engine.DB, values bool, chk Checker) (keys uint64, bytes int64, err error) {
	return ScanAllWith(db, engine.IterOptions{KeysOnly: !values}, chk)
}

// ScanAllWith is ScanAll with the iterator's options o.
func ScanAllWith(db engine.DB, o engine.IterOptions, chk Checker) (keys uint64, bytes int64, err error) {
	values := !o.KeysOnly
	rd, err := db.NewReader()
	if err != nil {
		return 0, 0, err
	}
	defer rd.Close()
	it, err := rd.NewIter(o)
	if err != nil {
		return 0, 0, err
	}
	defer it.Close()
	prev := make([]byte, 0, dataset.KeySize) // keys of other data sets vary in length
	for ; it.Valid(); it.Next() {
		k := it.Key()
		if keys > 0 && string(k) <= string(prev) {
			return keys, bytes, ErrOrder(prev, k)
		}
		prev = append(prev[:0], k...)
		bytes += int64(len(k))
		if values {
			v, err := it.Value()
			if err != nil {
				return keys, bytes, err
			}
			if err := chk.CheckKV(k, v); err != nil {
				return keys, bytes, err
			}
			bytes += int64(len(v))
		} else if err := chk.CheckKey(k); err != nil {
			return keys, bytes, err
		}
		keys++
	}
	return keys, bytes, it.Err()
}

// ErrOrder reports keys that do not ascend.
func ErrOrder(prev, k []byte) error {
	return fmt.Errorf("keys out of order: %q after %q", k, prev)
}

// TrimFloat prints f with at most two decimals and no trailing zeros.
func TrimFloat(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// DiskCounters are what the device gave the process between two samples:
// bytes read (/proc/self/io) and major page faults.
type DiskCounters struct{ ReadBytes, Majflt int64 }

// sampleDisk reads the process's counters now.
func sampleDisk() DiskCounters {
	io, _ := measure.ReadIO()
	return DiskCounters{io.ReadBytes, measure.ReadFaults().Major}
}

// Sub is what happened between sample d and sample c.
func (c DiskCounters) Sub(d DiskCounters) DiskCounters {
	return DiskCounters{c.ReadBytes - d.ReadBytes, c.Majflt - d.Majflt}
}

// Add sums two intervals.
func (c DiskCounters) Add(d DiskCounters) DiskCounters {
	return DiskCounters{c.ReadBytes + d.ReadBytes, c.Majflt + d.Majflt}
}

// Report reports read-B/op (ReportReads) and majflt/op over ops.
func (c DiskCounters) Report(b *testing.B, ops int64) {
	ReportReads(b, c.ReadBytes, float64(ops))
	b.ReportMetric(float64(c.Majflt)/float64(ops), "majflt/op")
}

// readsElsewhere: -dir's reads are another process's or machine's to do
// (measure.FS.ReadsElsewhere), set once -dir is found good.
var readsElsewhere bool

// ReadsCounted says whether /proc/self/io's read_bytes counts what the
// run reads from -dir's storage: every figure of it (read-B/op,
// open-read-B, Prefetch's read-MB, EmbedColdStart's read-KB/op and
// open-read-KB) is left out where it does not.
func ReadsCounted() bool { return !readsElsewhere }

// ReportReads reports read-B/op, bytes read from storage over ops, where
// the process's counters see those reads (ReadsCounted).
func ReportReads(b *testing.B, bytes int64, ops float64) {
	if ReadsCounted() {
		b.ReportMetric(float64(bytes)/ops, "read-B/op")
	}
}

// DiskUnits declares what DiskCounters.Report reports.
var DiskUnits = []Unit{Lower("read-B/op"), Lower("majflt/op")}

// LoopUnits declares what TimeLoop reports.
var LoopUnits = append([]Unit{Lower("sched-p99-ns"), Lower("open-ms"), Lower("open-read-B")}, DiskUnits...)
