package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

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

// adviseRandom advises MADV_RANDOM on every memory map, read-only or
// writable, of a file under dir that this process holds now
// (/proc/self/maps): a page fault then reads that page alone, not the
// device's read_ahead_kb around it. Maps made later are not covered.
func adviseRandom(dir string) error {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return fmt.Errorf("list memory maps: %w", err)
	}
	prefix := resolvedDir(dir) + "/"
	for _, line := range strings.Split(string(b), "\n") {
		// start-end perms offset dev inode path; only the path has a '/'.
		_, path, ok := strings.Cut(line, " /")
		if path = strings.TrimSuffix("/"+path, " (deleted)"); !ok || !strings.HasPrefix(path, prefix) {
			continue
		}
		var start, end uintptr
		if _, err := fmt.Sscanf(line, "%x-%x ", &start, &end); err != nil || end <= start {
			return fmt.Errorf("list memory maps: /proc/self/maps: bad range in %q", line)
		}
		switch _, _, errno := unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_RANDOM); errno {
		case 0, unix.ENOMEM: // ENOMEM: no longer mapped
		default:
			return fmt.Errorf("madvise(MADV_RANDOM) on the map of %s: %w", path, errno)
		}
	}
	return nil
}
