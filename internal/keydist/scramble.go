package keydist

import "math/bits"

const (
	fnvOffset = 0xCBF29CE484222325
	fnvPrime  = 1099511628211
	fnvPrime3 = fnvPrime * fnvPrime * fnvPrime % (1 << 64) // three zero bytes' steps at once
)

// fnvhash64 is YCSB's Utils.fnvhash64: FNV-1a 64 over the value's 8 bytes,
// low byte first, then Math.abs. Java's abs leaves the one value 2^63
// negative (and YCSB's key with it); here it stays 2^63, a valid hash.
func fnvhash64(v uint64) uint64 {
	h := uint64(fnvOffset)
	for range 5 {
		h ^= v & 0xff
		h *= fnvPrime
		v >>= 8
	}
	if v == 0 { // below 2^40, as YCSB's ranks are: each zero byte's step is one multiply
		h *= fnvPrime3
	} else {
		for range 3 {
			h ^= v & 0xff
			h *= fnvPrime
			v >>= 8
		}
	}
	if int64(h) < 0 {
		h = -h
	}
	return h
}

// affine returns a and c of the bijection rank -> (a*rank + c) mod m. a is
// the first integer from m/φ up that is coprime with m, so consecutive ranks
// land far apart (Fibonacci hashing); c moves rank 0 off index 0, the first
// key inserted.
func affine(m uint64) (a, c uint64) {
	a = max(uint64(float64(m)*0.6180339887498949), 1)
	for GCD(a, m) != 1 {
		a++
	}
	c = uint64(float64(m)*0.41421356237309503) % m // √2 - 1
	return a, c
}

// Permute returns (a*rank + c) mod m for a, c, rank < m, in 128 bits: with
// GCD(a, m) = 1, a bijection of [0, m).
func Permute(rank, a, c, m uint64) uint64 {
	hi, lo := bits.Mul64(a, rank)
	lo, carry := bits.Add64(lo, c, 0)
	_, rem := bits.Div64(hi+carry, lo, m) // a*rank + c < m*m, so hi < m
	return rem
}

// GCD is the greatest common divisor of a and b.
func GCD(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
