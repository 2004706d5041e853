package dataset

import (
	"bytes"
	"compress/flate"
	"errors"
	"testing"
)

func gen(t testing.TB, keys uint64, vs int, ratio float64) *Gen {
	g, err := New(Spec{Keys: keys, ValueSize: vs, ValueRatio: ratio, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestKeysUniqueInvertibleAndDisjointFromMisses(t *testing.T) {
	const n = 200_000
	g := gen(t, n, 8, 1)
	seen := make(map[string]bool, 2*n)
	var buf [KeySize]byte
	sorted := 0
	var prev []byte
	for i := uint64(0); i < n; i++ {
		k := g.Key(buf[:], i)
		if len(k) != KeySize {
			t.Fatalf("key length %d", len(k))
		}
		if seen[string(k)] {
			t.Fatalf("duplicate key at %d", i)
		}
		seen[string(k)] = true
		if j, ok := g.Index(k); !ok || j != i {
			t.Fatalf("Index(Key(%d)) = %d,%v", i, j, ok)
		}
		if prev != nil && bytes.Compare(prev, k) < 0 {
			sorted++
		}
		prev = append(prev[:0], k...)
	}
	// Write order must be random in key order: about half the steps go up.
	if sorted < n*45/100 || sorted > n*55/100 {
		t.Fatalf("%d of %d consecutive keys ascend: write order is not random", sorted, n)
	}
	for i := uint64(0); i < n; i++ {
		k := g.MissKey(buf[:], i)
		if seen[string(k)] {
			t.Fatalf("miss key %d collides with a hit key", i)
		}
		if _, ok := g.Index(k); ok {
			t.Fatalf("Index accepted miss key %d", i)
		}
	}
	if _, ok := g.Index([]byte("not-a-hex-key!!!")); ok {
		t.Fatal("Index accepted a foreign key")
	}
}

func TestSeedChangesKeysAndValues(t *testing.T) {
	a := gen(t, 10, 64, 1)
	b, _ := New(Spec{Keys: 10, ValueSize: 64, ValueRatio: 1, Seed: 2})
	var ka, kb [KeySize]byte
	if bytes.Equal(a.Key(ka[:], 3), b.Key(kb[:], 3)) {
		t.Fatal("seed does not change keys")
	}
	if bytes.Equal(a.Value(nil, 3), b.Value(nil, 3)) {
		t.Fatal("seed does not change values")
	}
}

func TestValueChecks(t *testing.T) {
	for _, vs := range []int{1, 7, 8, 100, 1024, 16384} {
		g := gen(t, 1000, vs, 1)
		full := g.NewChecker(true)
		cheap := g.NewChecker(false)
		v := g.Value(nil, 5)
		if len(v) != vs {
			t.Fatalf("value size %d, want %d", len(v), vs)
		}
		for _, c := range []*Checker{full, cheap} {
			if err := c.Check(5, v); err != nil {
				t.Fatalf("vs=%d: %v", vs, err)
			}
			if err := c.Check(6, v); !errors.Is(err, ErrWrongValue) && vs > 0 {
				t.Fatalf("vs=%d: value of key 5 accepted for key 6: %v", vs, err)
			}
			if err := c.Check(5, v[:vs-1]); !errors.Is(err, ErrWrongValue) {
				t.Fatalf("vs=%d: truncated value accepted", vs)
			}
		}
		if vs >= 100 {
			bad := append([]byte(nil), v...)
			bad[vs/3] ^= 1
			if full.Check(5, bad) == nil {
				t.Fatalf("vs=%d: full check missed a flipped byte", vs)
			}
		}
		var kb [KeySize]byte
		if err := cheap.CheckKV(g.Key(kb[:], 5), v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestValueRatioCompressibility(t *testing.T) {
	for _, ratio := range []float64{1, 0.5, 0.25} {
		g := gen(t, 100, 4096, ratio)
		var raw bytes.Buffer
		for i := uint64(0); i < 100; i++ {
			raw.Write(g.Value(nil, i))
		}
		var z bytes.Buffer
		w, _ := flate.NewWriter(&z, flate.DefaultCompression)
		w.Write(raw.Bytes())
		w.Close()
		got := float64(z.Len()) / float64(raw.Len())
		if got < ratio*0.9 || got > ratio*1.1+0.02 {
			t.Errorf("ratio %.2f: compresses to %.3f", ratio, got)
		}
	}
}

func TestHarnessDoesNotAllocate(t *testing.T) {
	g := gen(t, 1_000_000, 1024, 1)
	c := g.NewChecker(true)
	r := NewRand(1, 0)
	var kb [KeySize]byte
	v := g.Value(nil, 42)
	allocs := testing.AllocsPerRun(1000, func() {
		i := r.Below(g.Keys)
		_ = g.Key(kb[:], i)
		_ = c.Check(42, v)
		_ = g.CheckCheap(42, v)
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per key+check", allocs)
	}
}

func TestRandBelowIsUniform(t *testing.T) {
	r := NewRand(7, 3)
	var hist [10]int
	for i := 0; i < 100_000; i++ {
		hist[r.Below(10)]++
	}
	for d, n := range hist {
		if n < 9_500 || n > 10_500 {
			t.Fatalf("bucket %d has %d of 100000", d, n)
		}
	}
}

// BenchmarkHarness is the suite's own cost per random read: pick an index,
// make its key, check a value. It must stay far below any engine's read.
func BenchmarkHarness(b *testing.B) {
	for _, full := range []bool{false, true} {
		name := "verify=cheap"
		if full {
			name = "verify=full"
		}
		b.Run(name+"/valsz=1024", func(b *testing.B) {
			g := gen(b, 1_000_000, 1024, 1)
			c := g.NewChecker(full)
			r := NewRand(1, 0)
			var kb [KeySize]byte
			vals := [4][]byte{g.Value(nil, 0), g.Value(nil, 1), g.Value(nil, 2), g.Value(nil, 3)}
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n++ {
				i := r.Below(g.Keys)
				k := g.Key(kb[:], i)
				if err := c.Check(uint64(n&3), vals[n&3]); err != nil || len(k) != KeySize {
					b.Fatal(err)
				}
			}
		})
	}
}
