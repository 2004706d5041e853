package keydist

import (
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
)

func TestFastModIsMod(t *testing.T) {
	r := dataset.NewRand(3, 1)
	ns := []uint64{1, 2, 3, 7, 1000, 100_000, 1 << 32, 1<<32 + 1, 1<<63 - 1, 1 << 63, ^uint64(0)}
	for range 200 {
		ns = append(ns, r.Uint64()>>(r.Below(64)))
	}
	for _, n := range ns {
		if n == 0 {
			continue
		}
		f := newFastMod(n)
		xs := []uint64{0, 1, n - 1, n, n + 1, ^uint64(0), ^uint64(0) - 1, 1 << 63}
		for range 200 {
			xs = append(xs, r.Uint64())
		}
		for _, x := range xs {
			if got, want := f.of(x), x%n; got != want {
				t.Fatalf("%d mod %d: %d, want %d", x, n, got, want)
			}
		}
	}
}
