package memlimit

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// sizeUnits are the units ParseSize accepts, largest first: powers of
// 1024 only, so "64MiB" means one thing.
var sizeUnits = []struct {
	name  string
	shift uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}

// ParseSize reads a whole number of bytes with an optional binary unit:
// "67108864", "64MiB", "1GiB", "512KiB". Decimal units (MB, GB) and bare
// letters (M, G) are refused rather than guessed.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	shift := uint(0)
	for _, u := range sizeUnits {
		if rest, ok := strings.CutSuffix(t, u.name); ok {
			t, shift = strings.TrimSpace(rest), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a size: a whole number of bytes, or of KiB, MiB, GiB or TiB (64MiB, 1GiB)", s)
	}
	if n > (1<<63-1)>>shift {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n << shift, nil
}

// FormatSize writes n in the largest binary unit that divides it exactly,
// as ParseSize reads it back: 64MiB, 1GiB, 1000B.
func FormatSize(n int64) string {
	for _, u := range sizeUnits {
		if u.shift > 0 && n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// Human prints a byte count in binary units, one decimal: "44.5 MiB".
func Human(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	exp := (bits.Len64(uint64(n)) - 1) / 10 // 1 for KiB
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(int64(1)<<(10*exp)), "KMGTPE"[exp-1])
}
