package dataset

import (
	"errors"
	"testing"
)

func TestVersionedValues(t *testing.T) {
	for _, size := range []int{16, 20, 64, 1024, 1020} {
		for _, ratio := range []float64{1, 0.5} {
			g, err := New(Spec{Keys: 1000, ValueSize: size, ValueRatio: ratio, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if !g.VersionedValues() {
				if size >= 64 {
					t.Fatalf("size %d ratio %v: no versions", size, ratio)
				}
				continue // a random chunk of one word
			}
			scratch := make([]byte, size)
			for _, full := range []bool{false, true} {
				for _, i := range []uint64{0, 7, 999, 5000} { // 5000: a key inserted beyond Keys
					for _, ver := range []uint64{0, 1, 2, 1 << 40} {
						v := g.ValueV(nil, i, ver)
						got, err := g.CheckV(i, v, full, scratch)
						if err != nil || got != ver {
							t.Fatalf("size %d index %d version %d: got version %d, %v", size, i, ver, got, err)
						}
						// Another key's value, of any version, is caught.
						if _, err := g.CheckV(i+1, v, full, scratch); !errors.Is(err, ErrWrongValue) {
							t.Fatalf("size %d: value of %d v%d accepted for %d (%v)", size, i, ver, i+1, err)
						}
						// So is a value torn in its middle word.
						torn := append([]byte(nil), v...)
						torn[len(torn)/2&^7] ^= 1
						if _, err := g.CheckV(i, torn, full, scratch); !errors.Is(err, ErrWrongValue) {
							t.Fatalf("size %d index %d v%d: torn value accepted", size, i, ver)
						}
					}
				}
			}
			if got := g.ValueV(nil, 5, 0); string(got) != string(g.Value(nil, 5)) {
				t.Fatal("version 0 is not Value")
			}
			if string(g.ValueV(nil, 5, 1)) == string(g.ValueV(nil, 5, 2)) {
				t.Fatal("two versions share a value")
			}
		}
	}
}

func TestIndexAny(t *testing.T) {
	g, _ := New(Spec{Keys: 10, ValueSize: 8, ValueRatio: 1, Seed: 1})
	kb := make([]byte, KeySize)
	if _, ok := g.Index(g.Key(kb, 12)); ok {
		t.Fatal("Index accepted an index beyond Keys")
	}
	if i, ok := g.IndexAny(g.Key(kb, 12)); !ok || i != 12 {
		t.Fatalf("IndexAny: %d, %v", i, ok)
	}
	if _, ok := g.IndexAny(g.MissKey(kb, 3)); ok {
		t.Fatal("IndexAny accepted a miss key")
	}
}
