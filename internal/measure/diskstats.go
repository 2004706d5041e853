package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Device is the block device under a directory, as /proc/diskstats names
// it. Its counters include every writer of the device: the filesystem's
// journal and metadata, and any other process.
type Device struct{ Name string }

// DeviceOf finds the block device of the filesystem that holds dir, or
// would hold it once created (its nearest existing parent's). ok is false
// when it has none (tmpfs, overlay and other filesystems whose st_dev is
// not a block device).
func DeviceOf(dir string) (d Device, ok bool, err error) {
	var st unix.Stat_t
	for {
		err := unix.Stat(dir, &st)
		if err == nil {
			break
		}
		if parent := filepath.Dir(dir); err == unix.ENOENT && parent != dir {
			dir = parent
			continue
		}
		return Device{}, false, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	link := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	target, err := os.Readlink(link)
	if err != nil {
		return Device{}, false, nil
	}
	return Device{Name: filepath.Base(target)}, true, nil
}

// DiskStats are a device's cumulative counters: bytes read and written,
// and the write and cache-flush requests it completed (a write merged
// from several by the block layer counts once). Flushes are counted only
// where CountsFlushes: kernels since 5.5, whose lines have the flush
// fields; a device without a volatile write cache gets none, the block
// layer drops them.
type DiskStats struct {
	ReadBytes, WrittenBytes int64
	Writes, Flushes         int64
	CountsFlushes           bool
}

// Sub returns the change from earlier to s.
func (s DiskStats) Sub(earlier DiskStats) DiskStats {
	return DiskStats{ReadBytes: s.ReadBytes - earlier.ReadBytes, WrittenBytes: s.WrittenBytes - earlier.WrittenBytes,
		Writes: s.Writes - earlier.Writes, Flushes: s.Flushes - earlier.Flushes, CountsFlushes: s.CountsFlushes && earlier.CountsFlushes}
}

// Stats reads the device's line of /proc/diskstats (sectors are 512 bytes
// whatever the device's block size).
func (d Device) Stats() (DiskStats, error) {
	return readDiskStats("/proc/diskstats", d.Name)
}

func readDiskStats(path, name string) (DiskStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return DiskStats{}, err
	}
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		f := bytes.Fields(s.Bytes())
		// major minor name reads merged sectors-read ms writes merged
		// sectors-written ms in-flight ms weighted-ms, then (4.18) four
		// discard fields, then (5.5) flushes and their ms
		if len(f) < 10 || string(f[2]) != name {
			continue
		}
		var n [4]int64
		var err error
		for i, field := range []int{5, 9, 7, 18} {
			if field < len(f) && err == nil {
				n[i], err = strconv.ParseInt(string(f[field]), 10, 64)
			}
		}
		if err != nil {
			return DiskStats{}, fmt.Errorf("%s: bad line for %s: %q", path, name, s.Text())
		}
		return DiskStats{ReadBytes: n[0] * 512, WrittenBytes: n[1] * 512, Writes: n[2], Flushes: n[3], CountsFlushes: len(f) > 18}, nil
	}
	return DiskStats{}, fmt.Errorf("%s: no device %s", path, name)
}
