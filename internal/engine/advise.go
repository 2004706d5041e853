package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// fileMap is one memory map of a file in this process.
type fileMap struct {
	start, end uintptr
	path       string
}

// resolvedDir is dir absolute and with symlinks resolved, as the kernel
// names the files it maps.
func resolvedDir(dir string) string {
	if p, err := filepath.Abs(dir); err == nil {
		dir = p
	}
	if p, err := filepath.EvalSymlinks(dir); err == nil {
		dir = p
	}
	return dir
}

// fileMaps lists this process's memory maps of files under dir, read from
// /proc/self/maps.
func fileMaps(dir string) ([]fileMap, error) {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil, err
	}
	prefix := resolvedDir(dir) + "/"
	var out []fileMap
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// start-end perms offset dev inode path; only the path has a '/'.
		line := sc.Text()
		i := strings.Index(line, " /")
		if i < 0 {
			continue
		}
		path := strings.TrimSuffix(line[i+1:], " (deleted)")
		if !strings.HasPrefix(path, prefix) {
			continue
		}
		lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-")
		if !ok {
			return nil, fmt.Errorf("/proc/self/maps: bad line %q", line)
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("/proc/self/maps: bad range in %q", line)
		}
		out = append(out, fileMap{start: uintptr(start), end: uintptr(end), path: path})
	}
	return out, sc.Err()
}

// adviseRandom advises MADV_RANDOM on every memory map of a file under dir
// that this process holds now, and returns how many it advised: a page
// fault in them then reads that page alone, not the device's
// read_ahead_kb around it. It works the same on read-only and writable
// maps. A map made later (a file created or remapped after the call) is
// not covered. A map unmapped between reading /proc/self/maps and the
// madvise is skipped.
func adviseRandom(dir string) (int, error) {
	maps, err := fileMaps(dir)
	if err != nil {
		return 0, fmt.Errorf("list memory maps: %w", err)
	}
	n := 0
	for _, m := range maps {
		_, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_RANDOM)
		switch errno {
		case 0:
			n++
		case unix.ENOMEM: // no longer mapped
		default:
			return n, fmt.Errorf("madvise(MADV_RANDOM) on the map of %s: %w", m.path, errno)
		}
	}
	return n, nil
}
