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

// DiskStats are a device's cumulative counters, in bytes.
type DiskStats struct{ ReadBytes, WrittenBytes int64 }

// Sub returns the change from earlier to s.
func (s DiskStats) Sub(earlier DiskStats) DiskStats {
	return DiskStats{ReadBytes: s.ReadBytes - earlier.ReadBytes, WrittenBytes: s.WrittenBytes - earlier.WrittenBytes}
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
		// major minor name reads merged sectors-read ms writes merged sectors-written ...
		if len(f) < 10 || string(f[2]) != name {
			continue
		}
		rd, err1 := strconv.ParseInt(string(f[5]), 10, 64)
		wr, err2 := strconv.ParseInt(string(f[9]), 10, 64)
		if err1 != nil || err2 != nil {
			return DiskStats{}, fmt.Errorf("%s: bad line for %s: %q", path, name, s.Text())
		}
		return DiskStats{ReadBytes: rd * 512, WrittenBytes: wr * 512}, nil
	}
	return DiskStats{}, fmt.Errorf("%s: no device %s", path, name)
}
