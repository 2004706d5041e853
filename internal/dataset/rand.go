package dataset

import "math/bits"

// Rand is a small per-goroutine generator (wyrand): no locks, no
// allocation, so the timed loop measures the engine and not the harness.
type Rand struct{ s uint64 }

// NewRand seeds a generator; different streams of one run use different
// stream numbers.
func NewRand(seed, stream uint64) Rand {
	return Rand{s: mix64(seed*0x9e3779b97f4a7c15 ^ mix64(stream+1))}
}

// Uint64 returns the next value.
func (r *Rand) Uint64() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Below returns a value in [0, n) (Lemire's multiply; bias < n/2^64).
func (r *Rand) Below(n uint64) uint64 {
	hi, _ := bits.Mul64(r.Uint64(), n)
	return hi
}

// Float64 returns a value in [0, 1).
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) / (1 << 53)
}
