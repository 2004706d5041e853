package keydist

import "math"

// zipfian is Gray et al.'s generator over n ranks ("Quickly Generating
// Billion-Record Synthetic Databases", SIGMOD 1994), as YCSB's
// ZipfianGenerator.nextLong draws it: ranks 0 and 1 get their exact
// probabilities 1/zeta(n) and 2^-theta/zeta(n); the others come from a
// continuous approximation of the inverse distribution function.
type zipfian struct {
	n     uint64
	fn    float64 // n as a float
	theta float64
	alpha float64 // 1/(1-theta)
	zetan float64 // zeta(n) = sum of i^-theta for i in 1..n
	zeta2 float64 // zeta(2) = 1 + 0.5^theta
	eta   float64
}

func newZipfian(n uint64, theta, zetan float64) zipfian {
	z := zipfian{theta: theta, alpha: 1 / (1 - theta), zeta2: 1 + math.Pow(0.5, theta)}
	z.setCount(n, zetan)
	return z
}

// setCount sets the ranks' number and their zeta, and eta from them.
func (z *zipfian) setCount(n uint64, zetan float64) {
	z.n, z.fn, z.zetan = n, float64(n), zetan
	// eta = (1 - (2/n)^(1-theta)) / (1 - zeta2/zetan); Expm1 keeps the
	// numerator's digits when theta is near 1.
	z.eta = -math.Expm1((1-z.theta)*math.Log(2/z.fn)) / (1 - z.zeta2/zetan)
}

// rank maps u in [0, 1) to a rank in [0, n).
func (z *zipfian) rank(u float64) uint64 {
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < z.zeta2 {
		return 1
	}
	// n * b^alpha: b >= (2/n)^(1-theta) here but for rounding, which can
	// make it 0 (Java's Math.pow then gives 0 or NaN, and YCSB rank 0).
	b := z.eta*u - z.eta + 1
	if !(b > 0) {
		return 0
	}
	x := z.fn * pow(b, z.alpha)
	if !(x < z.fn) { // u next to 1 (rounding)
		return z.n - 1
	}
	return uint64(x)
}

// exactTerms is how many terms of a zeta sum are added one by one (some
// 30 ms); the Euler–Maclaurin formula gives the rest.
const exactTerms = 1 << 20

// sumRange returns the sum of i^-theta for i in a+1..b (YCSB's
// zetastatic(a, b); zeta(n) is sumRange(0, n)) and how many terms it added one by one: the first
// exactTerms, compensated (Neumaier), and the rest by emTail.
func sumRange(a, b uint64, theta float64) (float64, uint64) {
	last, sum := b, 0.0
	if b-a > exactTerms {
		last = a + exactTerms
		sum = emTail(last+1, b, theta)
	}
	comp := 0.0
	for i := last; i > a; i-- {
		sum, comp = addComp(sum, comp, math.Pow(float64(i), -theta))
	}
	return sum + comp, last - a
}

// addComp adds a term t to sum, both positive, keeping what the addition
// lost in comp (Neumaier's compensated summation).
func addComp(sum, comp, t float64) (float64, float64) {
	s := sum + t
	if sum >= t {
		comp += (sum - s) + t
	} else {
		comp += (t - s) + sum
	}
	return s, comp
}

// emTail returns the sum of f(i) = i^-theta for i in s..b by the
// Euler–Maclaurin formula to the third derivative (d1, d3 below):
//
//	∫_s^b f + (f(s)+f(b))/2 + (d1(b)-d1(s))/12 - (d3(b)-d3(s))/720.
//
// The fourth derivative keeps its sign, so the remainder is at most
// |d3(s)-d3(b)|/720 < theta(theta+1)(theta+2)·s^(-theta-3)/720, below 1e-20
// for s > 2^20 where sumRange uses it: the sum is as exact as float64
// rounding allows (relative error ~1e-15).
func emTail(s, b uint64, theta float64) float64 {
	fs, fb := float64(s), float64(b)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	d1 := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	d3 := func(x float64) float64 { return -theta * (theta + 1) * (theta + 2) * math.Pow(x, -theta-3) }
	// ∫ = (b^(1-theta) - s^(1-theta)) / (1-theta), with Expm1 so that the
	// difference keeps its digits when theta is near 1.
	integral := math.Pow(fs, 1-theta) * math.Expm1((1-theta)*math.Log(fb/fs)) / (1 - theta)
	return integral + (f(fs)+f(fb))/2 + (d1(fb)-d1(fs))/12 - (d3(fb)-d3(fs))/720
}

// The tables of pow: b's mantissa cells [1+j/128, 1+(j+1)/128) with their
// centres c, 1/c and ln c, and the bits of 2^(j/128).
const powCells = 128

var (
	lnTab  [powCells]struct{ c, invc, lnc float64 }
	expTab [powCells]uint64
)

func init() {
	for j := range powCells {
		c := 1 + (float64(j)+0.5)/powCells
		lnTab[j].c, lnTab[j].invc, lnTab[j].lnc = c, 1/c, math.Log(c)
		expTab[j] = math.Float64bits(math.Exp2(float64(j) / powCells))
	}
}

const (
	ln2Hi     = 6.93147180369123816490e-01 // ln 2 to 32 bits: its products with integers below 2^21 are exact
	ln2Lo     = 1.90821492927058770002e-10 // ln 2 - ln2Hi
	roundBias = 0x1.8p52                   // y + roundBias rounds y to an integer, found in the low bits
)

// pow returns b^a = e^(a·ln b) for b in [2^-1000, 1] and a·ln b >= -700,
// with about math.Pow's accuracy (relative error within a few 1e-16 times
// 1 + |a·ln b| + a) at a fraction of math.Exp(a*math.Log(b))'s cost: one
// table look-up and a degree-6 polynomial for the logarithm, one look-up and
// a degree-5 polynomial for the exponential, no division.
func pow(b, a float64) float64 {
	// ln b = e·ln2 + ln c + ln(1+r), c the centre of b's mantissa cell, |r| < 2^-8.
	bits := math.Float64bits(b)
	e := float64(int64(bits>>52) - 1023)
	t := &lnTab[bits>>45&(powCells-1)]
	r := (math.Float64frombits(bits&(1<<52-1)|1023<<52) - t.c) * t.invc
	r2 := r * r
	ln1p := r - r2*(0.5-r*(1.0/3)) + r2*r2*(-0.25+r*(0.2-r*(1.0/6))) // error < r^7/7 < 1e-17
	y := a * (e*ln2Hi + t.lnc + ln1p + e*ln2Lo)

	// e^y = 2^(k/128)·e^s, k = round(y·128/ln2), |s| <= ln2/256.
	kd := y*(powCells/math.Ln2) + roundBias
	k := int64(math.Float64bits(kd) - math.Float64bits(roundBias))
	kd -= roundBias
	s := y - kd*(ln2Hi/powCells) - kd*(ln2Lo/powCells)
	s2 := s * s
	p := 1 + s + s2*(0.5+s*(1.0/6)) + s2*s2*(1.0/24+s*(1.0/120)) // error < s^6/720 < 1e-18
	return math.Float64frombits(expTab[k&(powCells-1)]+uint64(k>>7)<<52) * p
}
