package keydist

import "math/bits"

// fastMod is x mod n for a fixed n by multiplication alone (Lemire, Kaser
// and Kurz, "Faster Remainder by Direct Computation", 2019: fastmod_u64):
// a 64-bit division costs more than the rest of a Zipfian draw, and n
// changes only when inserts are acknowledged.
type fastMod struct {
	n      uint64
	mHi, m uint64 // M = floor((2^128-1)/n) + 1, 128 bits
}

func newFastMod(n uint64) fastMod {
	qHi, r := bits.Div64(0, ^uint64(0), n)
	qLo, _ := bits.Div64(r, ^uint64(0), n)
	lo, carry := bits.Add64(qLo, 1, 0)
	return fastMod{n: n, mHi: qHi + carry, m: lo}
}

// of is x mod n: the low 128 bits of M·x, times n, shifted right by 128.
func (f fastMod) of(x uint64) uint64 {
	hi, lo := bits.Mul64(f.m, x)
	hi += f.mHi * x // M·x mod 2^128 = hi:lo
	h2, _ := bits.Mul64(lo, f.n)
	h3, l3 := bits.Mul64(hi, f.n)
	_, carry := bits.Add64(l3, h2, 0)
	return h3 + carry
}
