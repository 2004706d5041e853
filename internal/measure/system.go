package measure

import (
	"bufio"
	"os"
	"strings"
	"syscall"
)

// Kernel is the running kernel's release and version.
func Kernel() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	return cstr(u.Sysname[:]) + " " + cstr(u.Release[:])
}

func cstr(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}

// CPUModel is the first "model name" in /proc/cpuinfo.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// FS describes the filesystem holding a path.
type FS struct {
	Type      string // ext4, xfs, tmpfs, ...
	Device    string // the mounted source, from mountinfo
	MountedOn string
	Free      int64 // bytes available to an unprivileged user
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
	fs := FS{Type: fsMagic[int64(st.Type)], Free: int64(st.Bavail) * int64(st.Bsize)}
	// The longest mount point that contains path names its device and type.
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			pre, post, ok := strings.Cut(line, " - ")
			f, g := strings.Fields(pre), strings.Fields(post)
			if !ok || len(f) < 5 || len(g) < 2 {
				continue
			}
			mp := f[4]
			if (path == mp || strings.HasPrefix(path, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= len(fs.MountedOn) {
				fs.MountedOn, fs.Type, fs.Device = mp, g[0], g[1]
			}
		}
	}
	if fs.Type == "" {
		fs.Type = "unknown"
	}
	return fs, nil
}
