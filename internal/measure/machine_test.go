package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeminfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(path, []byte("MemTotal:       24684092 kB\nMemFree:        22565140 kB\n"), 0o644)
	if n, err := meminfo(path, "MemFree"); err != nil || n != 22565140<<10 {
		t.Errorf("MemFree = %d, %v; want %d", n, err, 22565140<<10)
	}
	for _, bad := range []string{"MemFree: 1 kB\n", "MemTotal: 12 MB\n", "MemTotal: 12\n", "MemTotal: x kB\n", ""} {
		os.WriteFile(path, []byte(bad), 0o644)
		if n, err := meminfo(path, "MemTotal"); err == nil {
			t.Errorf("MemTotal of %q = %d, want an error", bad, n)
		}
	}
	if n, err := MemTotal(); err != nil || n < 64<<20 {
		t.Errorf("MemTotal on this machine = %d, %v", n, err)
	}
}

// sysTree builds files (path: content) and symlinks (path: "-> target")
// under a temporary root.
func sysTree(t *testing.T, entries map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range entries {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(c, "-> "):
			err = os.Symlink(strings.TrimPrefix(c, "-> "), full)
		case strings.HasSuffix(p, "/"):
			err = os.MkdirAll(full, 0o755)
		default:
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The layouts /sys has for a virtio disk, an NVMe partition, a
// device-mapper volume and a device that says nothing of itself.
func TestDescribeBlock(t *testing.T) {
	root := sysTree(t, map[string]string{
		"dev/block/254:0":                                "-> ../../devices/pci/virtio1/block/vda",
		"devices/pci/virtio1/block/vda/uevent":           "MAJOR=254\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\n",
		"devices/pci/virtio1/block/vda/device":           "-> ../../../virtio1",
		"devices/pci/virtio1/block/vda/queue/rotational": "1\n",
		"devices/pci/virtio1/driver":                     "-> ../../bus/virtio/drivers/virtio_blk",

		"dev/block/259:2": "-> ../../devices/pci/nvme/nvme0/nvme0n1/nvme0n1p2",
		"devices/pci/nvme/nvme0/nvme0n1/nvme0n1p2/uevent":    "DEVNAME=nvme0n1p2\nDEVTYPE=partition\n",
		"devices/pci/nvme/nvme0/nvme0n1/nvme0n1p2/partition": "2\n",
		"devices/pci/nvme/nvme0/nvme0n1/device":              "-> ../../nvme0",
		"devices/pci/nvme/nvme0/nvme0n1/queue/rotational":    "0\n",
		"devices/pci/nvme/nvme0/model":                       "Samsung SSD 980 PRO 1TB                 \n",

		"dev/block/253:0":                             "-> ../../devices/virtual/block/dm-0",
		"devices/virtual/block/dm-0/uevent":           "DEVNAME=dm-0\n",
		"devices/virtual/block/dm-0/dm/name":          "vg-root\n",
		"devices/virtual/block/dm-0/slaves/sda3/":     "",
		"devices/virtual/block/dm-0/queue/rotational": "0\n",

		"dev/block/7:0":                "-> ../../devices/virtual/block/loop0",
		"devices/virtual/block/loop0/": "",
	})
	for dev, want := range map[string]string{
		"254:0": "/dev/vda (virtio_blk, rotational=1)",
		"259:2": "/dev/nvme0n1p2 (Samsung SSD 980 PRO 1TB, rotational=0)",
		"253:0": "/dev/dm-0 (dm vg-root, on sda3, rotational=0)",
		"7:0":   "/dev/loop0",
	} {
		if got := describeBlock(filepath.Join(root, "dev/block", dev)); got != want {
			t.Errorf("%s: %q, want %q", dev, got, want)
		}
	}
}

// On this machine: the device under a temporary directory is named, or
// said to be none.
func TestBlockDeviceHere(t *testing.T) {
	got := BlockDevice(t.TempDir())
	if !strings.HasPrefix(got, "/dev/") && !strings.HasPrefix(got, "none (") {
		t.Errorf("BlockDevice = %q", got)
	}
	if sys, ok := BlockDevOf(t.TempDir()); ok && !strings.HasPrefix(sys, "/sys/dev/block/") {
		t.Errorf("BlockDevOf = %q", sys)
	}
}

// Bytes, write and flush requests are read from their own fields, of the
// device named and no other (vda, not vda1); a line from a kernel before
// 5.5 has no flush fields, and says so.
func TestReadDiskStatsRequests(t *testing.T) {
	p := filepath.Join(t.TempDir(), "diskstats")
	os.WriteFile(p, []byte(" 254       1 vda1 1 0 8 0 2 0 16 0 0 0 0\n 254       0 vda 100 0 2000 5 300 7 4000 9 0 0 0 1 0 8 0 60 3\n 254       16 vdb 1 0 8 0 2 0 16 0 0 0 0\n"), 0o644)
	s, err := readDiskStats(p, "vda")
	if err != nil {
		t.Fatal(err)
	}
	if want := (DiskStats{ReadBytes: 2000 * 512, WrittenBytes: 4000 * 512, Writes: 300, Flushes: 60, CountsFlushes: true}); s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	old, err := readDiskStats(p, "vdb")
	if err != nil {
		t.Fatal(err)
	}
	if want := (DiskStats{ReadBytes: 8 * 512, WrittenBytes: 16 * 512, Writes: 2}); old != want {
		t.Errorf("got %+v, want %+v", old, want)
	}
	if d := s.Sub(old); d.CountsFlushes {
		t.Errorf("a change from a sample without flush fields counts flushes: %+v", d)
	}
	if _, err := readDiskStats(p, "sdz"); err == nil {
		t.Error("a missing device was found")
	}
}

// A directory yet to be created is on its parent's device.
func TestDeviceOfMissingDir(t *testing.T) {
	dir := t.TempDir()
	d1, ok1, err1 := deviceOf(dir)
	d2, ok2, err2 := deviceOf(filepath.Join(dir, "not", "yet"))
	if err1 != nil || err2 != nil || d1 != d2 || ok1 != ok2 {
		t.Errorf("%v %v %v / %v %v %v", d1, ok1, err1, d2, ok2, err2)
	}
	if _, ok, err := DeviceStats(dir); err != nil || ok != ok1 {
		t.Error(ok, err)
	}
}

// A directory is in memory exactly when its filesystem is tmpfs or ramfs,
// and one yet to be created is where its parent is.
func TestInMemory(t *testing.T) {
	for _, dir := range []string{t.TempDir(), "/dev/shm"} {
		fs, err := FileSystem(dir)
		if err != nil {
			t.Skipf("%s: %v", dir, err)
		}
		want := fs.Type == "tmpfs" || fs.Type == "ramfs"
		for _, p := range []string{dir, filepath.Join(dir, "not", "yet")} {
			if got, err := InMemory(p); err != nil || got != want {
				t.Errorf("InMemory(%s) = %v, %v; want %v (%s)", p, got, err, want, fs.Type)
			}
		}
	}
}

// TestReadsElsewhere: the filesystems whose reads a FUSE daemon, a server
// or a host does, by their mountinfo type, and none that reads in this
// process's name.
func TestReadsElsewhere(t *testing.T) {
	for typ, want := range map[string]bool{"fuse": true, "fuse.sshfs": true, "fuseblk": true, "virtiofs": true, "nfs": true, "nfs4": true,
		"cifs": true, "smb3": true, "ceph": true, "9p": true, "ext4": false, "xfs": false, "btrfs": false, "tmpfs": false, "overlay": false, "unknown": false} {
		if got := (FS{Type: typ}).ReadsElsewhere(); got != want {
			t.Errorf("%s: reads elsewhere %v, want %v", typ, got, want)
		}
	}
}
