package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// MemTotal is the machine's memory as the kernel counts it (MemTotal in
// /proc/meminfo), in bytes.
func MemTotal() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return parseMemTotal(b)
}

func parseMemTotal(meminfo []byte) (int64, error) {
	s := bufio.NewScanner(bytes.NewReader(meminfo))
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok || k != "MemTotal" {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			break
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 {
			break
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("/proc/meminfo: no MemTotal in kB")
}

// BlockDevOf is the /sys/dev/block entry (/sys/dev/block/MAJ:MIN) of the
// device holding path, and false where the filesystem has no block device
// (tmpfs, overlay, a network filesystem: its device number is not in
// /sys/dev/block).
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

// BlockDevice describes the block device holding path: its name, the
// disk's model and driver and whether the kernel takes it for rotational,
// each where /sys says so (`/dev/vda (virtio_blk, rotational=1)`).
func BlockDevice(path string) string {
	sys, ok := BlockDevOf(path)
	if !ok {
		return "none (tmpfs, overlay or network filesystem)"
	}
	return describeBlock(sys)
}

// describeBlock describes the /sys/dev/block entry sys. A partition has no
// model, driver or queue of its own: they are its disk's, the parent
// directory. A device-mapper or md device names what it is built on.
func describeBlock(sys string) string {
	name := ueventName(sys)
	if name == "" {
		if real, err := filepath.EvalSymlinks(sys); err == nil {
			name = filepath.Base(real)
		} else {
			name = filepath.Base(sys)
		}
	}
	disk := sys
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		disk = sys + "/.."
	}
	var parts []string
	if m := readTrimmed(disk + "/device/model"); m != "" {
		parts = append(parts, m)
	}
	if d, err := os.Readlink(disk + "/device/driver"); err == nil {
		parts = append(parts, filepath.Base(d))
	}
	if dm := readTrimmed(disk + "/dm/name"); dm != "" {
		parts = append(parts, "dm "+dm)
	}
	if ents, err := os.ReadDir(disk + "/slaves"); err == nil && len(ents) > 0 {
		on := make([]string, len(ents))
		for i, e := range ents {
			on[i] = e.Name()
		}
		parts = append(parts, "on "+strings.Join(on, " "))
	}
	if r := readTrimmed(disk + "/queue/rotational"); r != "" {
		parts = append(parts, "rotational="+r)
	}
	if len(parts) == 0 {
		return "/dev/" + name
	}
	return "/dev/" + name + " (" + strings.Join(parts, ", ") + ")"
}

// ueventName is the DEVNAME of a /sys/dev/block entry's uevent file.
func ueventName(sys string) string {
	b, err := os.ReadFile(sys + "/uevent")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "DEVNAME="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
