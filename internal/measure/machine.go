package measure

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MemTotal is the machine's memory as the kernel counts it (MemTotal in
// /proc/meminfo), in bytes.
func MemTotal() (int64, error) { return meminfo("/proc/meminfo", "MemTotal") }

// meminfo is key's value in the meminfo file at path, in bytes.
func meminfo(path, key string) (int64, error) {
	v, _ := lineValue(path, key, ":")
	kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil || kb <= 0 || !strings.HasSuffix(v, " kB") {
		return 0, fmt.Errorf("%s: no %s in kB", path, key)
	}
	return kb << 10, nil
}

// BlockDevOf is the /sys/dev/block/MAJ:MIN entry of the device holding
// path, and false where there is none (tmpfs, overlay, network).
func BlockDevOf(path string) (string, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return "", false
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	if _, err := os.Stat(sys); err != nil {
		return "", false
	}
	return sys, true
}

// BlockDevice describes the block device holding path: its name, and the
// disk's model, driver and rotational flag where /sys says them
// (`/dev/vda (virtio_blk, rotational=1)`).
func BlockDevice(path string) string {
	sys, ok := BlockDevOf(path)
	if !ok {
		return "none (tmpfs, overlay or network filesystem)"
	}
	return describeBlock(sys)
}

// describeBlock describes the /sys/dev/block entry sys. A partition's
// model, driver and queue are its disk's (the parent directory); a
// device-mapper or md device names what it is built on.
func describeBlock(sys string) string {
	real, err := filepath.EvalSymlinks(sys)
	if err != nil {
		real = sys
	}
	uevent, _ := lineValue(sys+"/uevent", "DEVNAME", "=")
	name := cmp.Or(uevent, filepath.Base(real))
	disk := sys
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		disk = sys + "/.."
	}
	var parts []string
	add := func(prefix, v string) {
		if v != "" {
			parts = append(parts, prefix+v)
		}
	}
	add("", readTrimmed(disk+"/device/model"))
	if d, err := os.Readlink(disk + "/device/driver"); err == nil {
		add("", filepath.Base(d))
	}
	add("dm ", readTrimmed(disk+"/dm/name"))
	var on []string
	if ents, err := os.ReadDir(disk + "/slaves"); err == nil {
		for _, e := range ents {
			on = append(on, e.Name())
		}
	}
	add("on ", strings.Join(on, " "))
	add("rotational=", readTrimmed(disk+"/queue/rotational"))
	if len(parts) == 0 {
		return "/dev/" + name
	}
	return "/dev/" + name + " (" + strings.Join(parts, ", ") + ")"
}

// lineValue is the value of the first line "key<sep>value" of the file at
// path, spaces trimmed around key and value.
func lineValue(path, key, sep string) (string, bool) {
	b, _ := os.ReadFile(path)
	for line := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(line, sep); ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// DeviceStats reads the counters of the block device of the filesystem
// that holds dir, or its nearest existing parent; ok is false when there is
// none (tmpfs, overlay). They include every writer (journal, metadata,
// other processes).
func DeviceStats(dir string) (s DiskStats, ok bool, err error) {
	name, ok, err := deviceOf(dir)
	if !ok || err != nil {
		return s, ok, err
	}
	s, err = readDiskStats("/proc/diskstats", name)
	return s, true, err
}

// deviceOf is the name /proc/diskstats gives the device of DeviceStats.
func deviceOf(dir string) (name string, ok bool, err error) {
	var st unix.Stat_t
	if err := unix.Stat(nearest(dir), &st); err != nil {
		return "", false, &os.PathError{Op: "stat", Path: dir, Err: err}
	}
	link := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	target, err := os.Readlink(link)
	if err != nil {
		return "", false, nil
	}
	return filepath.Base(target), true, nil
}

// DiskStats are a device's cumulative counters: bytes read and written,
// and the write and cache-flush requests it completed (merged writes count
// once). Flushes are counted only where CountsFlushes (kernels since 5.5); a
// device without a volatile write cache gets none.
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

// readDiskStats reads the device's line of a diskstats file (sectors are
// 512 bytes whatever the device's block size).
func readDiskStats(path, name string) (DiskStats, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return DiskStats{}, err
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		// major minor name reads merged sectors-read ms writes merged
		// sectors-written ms in-flight ms weighted-ms, then (4.18) four
		// discard fields, then (5.5) flushes and their ms
		if len(f) < 10 || f[2] != name {
			continue
		}
		var n [4]int64
		var err error
		for i, field := range []int{5, 9, 7, 18} {
			if field < len(f) && err == nil {
				n[i], err = strconv.ParseInt(f[field], 10, 64)
			}
		}
		if err != nil {
			return DiskStats{}, fmt.Errorf("%s: bad line for %s: %q", path, name, strings.TrimSuffix(line, "\n"))
		}
		return DiskStats{ReadBytes: n[0] * 512, WrittenBytes: n[1] * 512, Writes: n[2], Flushes: n[3], CountsFlushes: len(f) > 18}, nil
	}
	return DiskStats{}, fmt.Errorf("%s: no device %s", path, name)
}

// Kernel is the running kernel's release and version.
func Kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])
}

// CPUModel is the first "model name" in /proc/cpuinfo.
func CPUModel() string {
	if v, ok := lineValue("/proc/cpuinfo", "model name", ":"); ok {
		return v
	}
	return "unknown"
}

// FS describes the filesystem holding a path.
type FS struct {
	Type      string // ext4, xfs, tmpfs, ...
	Device    string // the mounted source, from mountinfo
	MountedOn string
	Free      int64 // bytes available to an unprivileged user (FreeOf)
	Sized     bool  // false for a filesystem with no size, which memory bounds
}

// FreeOf is the free space statfs st gives an unprivileged user. A
// filesystem with no size (ramfs, or tmpfs mounted with size=0: statfs
// reports no blocks at all) holds what memory can: the memory available
// (MemAvailable in /proc/meminfo), and sized is false.
func FreeOf(st *syscall.Statfs_t) (free int64, sized bool) {
	if st.Blocks != 0 {
		return int64(st.Bavail) * int64(st.Bsize), true
	}
	free, _ = meminfo("/proc/meminfo", "MemAvailable")
	return free, false
}

var fsMagic = map[int64]string{
	0xef53: "ext4", 0x58465342: "xfs", 0x01021994: "tmpfs", 0x9123683e: "btrfs",
	0x794c7630: "overlayfs", 0x2fc12fc1: "zfs", 0x6969: "nfs", 0xf2f52010: "f2fs",
}

// FileSystem describes the filesystem of path.
func FileSystem(path string) (FS, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return FS{}, err
	}
	fs := FS{Type: fsMagic[int64(st.Type)]}
	fs.Free, fs.Sized = FreeOf(&st)
	// The longest mount point that contains path names its device and type.
	mounts, _ := Mounts("/proc/self/mountinfo")
	for _, m := range mounts {
		if (path == m.Point || strings.HasPrefix(path, strings.TrimSuffix(m.Point, "/")+"/")) && len(m.Point) >= len(fs.MountedOn) {
			fs.MountedOn, fs.Type, fs.Device = m.Point, m.Type, m.Source
		}
	}
	fs.Type = cmp.Or(fs.Type, "unknown")
	return fs, nil
}

// ReadsElsewhere says whether another process or machine does the
// filesystem's reads from its storage: a FUSE daemon (fuse, fuse.sshfs,
// fuseblk, virtiofs), a network server (nfs, cifs, ceph) or a host (9p).
// This process's /proc/self/io read_bytes counts none of them.
func (fs FS) ReadsElsewhere() bool {
	t, _, _ := strings.Cut(fs.Type, ".")
	return slices.Contains([]string{"fuse", "fuseblk", "virtiofs", "nfs", "nfs4", "cifs", "smb3", "ceph", "9p"}, t)
}

// InMemory says whether path (or, while it does not exist yet, its
// nearest parent that does) is on a filesystem whose files are memory
// (tmpfs, ramfs): nothing under it is written back or can be evicted, so
// /proc/self/io's write_bytes never counts its writes and no read of it
// is cold.
func InMemory(path string) (bool, error) {
	fs, err := FileSystem(nearest(path))
	return fs.Type == "tmpfs" || fs.Type == "ramfs", err
}

// nearest is path or, while it does not exist, its nearest parent that does.
func nearest(path string) string {
	for {
		parent := filepath.Dir(path)
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) || parent == path {
			return path
		}
		path = parent
	}
}

// Mount is one line of a mountinfo file: the mounted root and where (octal
// escapes undone), its type, source and super options.
type Mount struct{ Root, Point, Type, Source, Super string }

// Mounts reads a mountinfo file (/proc/self/mountinfo).
func Mounts(file string) ([]Mount, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []Mount
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if ok && len(f) >= 5 && len(g) >= 3 {
			out = append(out, Mount{Root: unescape(f[3]), Point: unescape(f[4]), Type: g[0], Source: g[1], Super: g[2]})
		}
	}
	return out, nil
}

// unescape undoes mountinfo's octal escapes, of the four characters the
// kernel escapes there.
var unescape = strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace
