package engine

import (
	"fmt"
	"os"
	"path/filepath"
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
	for _, line := range strings.Split(string(b), "\n") {
		// start-end perms offset dev inode path; only the path has a '/'.
		_, path, ok := strings.Cut(line, " /")
		if path = strings.TrimSuffix("/"+path, " (deleted)"); !ok || !strings.HasPrefix(path, prefix) {
			continue
		}
		m := fileMap{path: path}
		if _, err := fmt.Sscanf(line, "%x-%x ", &m.start, &m.end); err != nil || m.end <= m.start {
			return nil, fmt.Errorf("/proc/self/maps: bad range in %q", line)
		}
		out = append(out, m)
	}
	return out, nil
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
