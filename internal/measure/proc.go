// Package measure reads what the kernel knows about this process (disk
// bytes, resident memory, page faults) and about the machine, so benchmark
// figures come from counters rather than estimates.
package measure

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// IO is a snapshot of /proc/self/io, every thread of the process included.
// ReadBytes and WriteBytes went to or came from storage (not the page cache).
type IO struct {
	RChar, WChar          int64 // bytes passed to read/write syscalls
	ReadBytes, WriteBytes int64 // bytes fetched from / sent to storage
	CancelledWriteBytes   int64 // written to the page cache, then truncated away
}

// Sub returns the change from earlier to io.
func (io IO) Sub(earlier IO) IO {
	return IO{
		RChar: io.RChar - earlier.RChar, WChar: io.WChar - earlier.WChar,
		ReadBytes: io.ReadBytes - earlier.ReadBytes, WriteBytes: io.WriteBytes - earlier.WriteBytes,
		CancelledWriteBytes: io.CancelledWriteBytes - earlier.CancelledWriteBytes,
	}
}

// ReadIO reads /proc/self/io.
func ReadIO() (IO, error) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return IO{}, err
	}
	var io IO
	fields := map[string]*int64{"rchar": &io.RChar, "wchar": &io.WChar, "read_bytes": &io.ReadBytes,
		"write_bytes": &io.WriteBytes, "cancelled_write_bytes": &io.CancelledWriteBytes}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		if p := fields[k]; p != nil {
			if *p, err = strconv.ParseInt(v, 10, 64); err != nil {
				return IO{}, fmt.Errorf("/proc/self/io: %w", err)
			}
		}
	}
	return io, nil
}

// ResetPeakRSS sets the process's peak RSS back to its current RSS
// (Linux clear_refs 5), so a peak can be measured per benchmark.
func ResetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// Faults is the process's page faults so far (all threads).
type Faults struct{ Major, Minor int64 }

// ReadFaults reads getrusage(RUSAGE_SELF).
func ReadFaults() Faults {
	ru := rusage()
	return Faults{Major: ru.Majflt, Minor: ru.Minflt}
}

// rusage is getrusage(RUSAGE_SELF), zero where it fails.
func rusage() (ru syscall.Rusage) {
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru
}

// Written is what the process's writes will cost the storage: the bytes it
// dirtied (write_bytes) less those dropped before writeback because their
// file was truncated or deleted (cancelled_write_bytes).
func (io IO) Written() int64 { return io.WriteBytes - io.CancelledWriteBytes }

// CPUTime is the user plus system CPU time of the process: unlike wall time
// it does not grow while other processes hold the CPUs.
func CPUTime() time.Duration {
	ru := rusage()
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ColdChildLine prefixes the line of figures a cold-start child prints on
// stdout (the test binary and the embedded-cdb program alike).
const ColdChildLine = "embed-cold-child:"

// WriteColdChild prints a cold-start child's figures: from startNS (the
// parent's Unix ns before starting it) and from t0 (the child's open) to t1,
// its own peak resident size (rusage's maxrss would count the parent's pages
// until exec), and its bytes read from storage, in all and since io0.
func WriteColdChild(w io.Writer, startNS int64, t0, t1 time.Time, io0 IO) error {
	io1, err := ReadIO()
	if err != nil {
		return err
	}
	m, err := ReadRSS()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s first-read-ns=%d open-read-ns=%d peak-rss-kb=%d read-b=%d open-read-b=%d\n", ColdChildLine,
		t1.UnixNano()-startNS, t1.Sub(t0).Nanoseconds(), m.Peak>>10, io1.ReadBytes, io1.ReadBytes-io0.ReadBytes)
	return err
}
