package measure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseMemTotal(t *testing.T) {
	n, err := parseMemTotal([]byte("MemTotal:       24684092 kB\nMemFree:        22565140 kB\n"))
	if err != nil || n != 24684092<<10 {
		t.Errorf("parseMemTotal = %d, %v; want %d", n, err, 24684092<<10)
	}
	for _, bad := range []string{"MemFree: 1 kB\n", "MemTotal: 12 MB\n", "MemTotal: x kB\n", ""} {
		if n, err := parseMemTotal([]byte(bad)); err == nil {
			t.Errorf("parseMemTotal(%q) = %d, want an error", bad, n)
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
