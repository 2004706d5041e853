// Package keydist draws the indices of the keys a YCSB-style workload
// touches: uniform, YCSB's scrambled Zipfian ("zipf") and its skewed latest
// ("latest"). The Zipfians follow YCSB's Java generators (ZipfianGenerator,
// ScrambledZipfianGenerator, SkewedLatestGenerator), so a skew here means
// what it means in YCSB's results and in the stores' own benchmarks that
// copy them. Params is immutable and shared, each goroutine draws through
// its own Sampler and dataset.Rand, a draw takes no lock and allocates
// nothing, and a zeta of any size costs at most 2^20 terms and a
// closed-form tail (docs/workloads.md, "Key distributions", says why the
// suite has a generator of its own).
package keydist

import (
	"fmt"
	"slices"

	"github.com/kvbench/kvbench/internal/dataset"
)

// Kind is a key distribution.
type Kind int

const (
	Uniform Kind = iota // every existing key equally likely
	Zipf                // YCSB's "zipfian": Zipfian popularity, hot keys scattered
	Latest              // YCSB's "latest": Zipfian over recency, the newest key hottest
)

var kindNames = [...]string{Uniform: "uniform", Zipf: "zipf", Latest: "latest"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind reads a distribution's name.
func ParseKind(s string) (Kind, error) {
	if k := slices.Index(kindNames[:], s); k >= 0 {
		return Kind(k), nil
	}
	return 0, fmt.Errorf("keydist: unknown distribution %q (choose uniform, zipf or latest)", s)
}

const (
	// YCSBTheta is YCSB's Zipfian constant (ZipfianGenerator.ZIPFIAN_CONSTANT).
	YCSBTheta = 0.99
	// ycsbItems is ScrambledZipfianGenerator.ITEM_COUNT. YCSB builds its
	// ZipfianGenerator(0, ITEM_COUNT), so the ranks number ITEM_COUNT+1.
	ycsbItems = 10_000_000_000
	// ycsbZeta is ScrambledZipfianGenerator.ZETAN, zeta(ITEM_COUNT, 0.99),
	// which YCSB uses as is when theta is 0.99.
	ycsbZeta = 26.46902820178302
	// maxKeys is the most indices dataset.Gen maps to keys.
	maxKeys = 1 << 62
)

// Params is one run's distribution. It is immutable and shared by every
// goroutine of the run.
type Params struct {
	Kind  Kind
	Theta float64 // Zipf, Latest: the Zipfian constant, in (0, 1)
	Items uint64  // Zipf: 0 = YCSB's 10^10 scrambled ranks; m > 0 = a Zipfian over m items
	Start uint64  // keys that exist at the start: the least n Next is given

	zipf      zipfian // Zipf: over the ranks; Latest: over the Start keys
	mulA      uint64  // Zipf with Items: index = (mulA*rank + addC) mod Items
	addC      uint64
	zetaTerms uint64 // terms New added one by one; the rest of a zeta came from its tail formula
}

// New checks a distribution's parameters and precomputes what its draws
// need. n is the number of keys loaded at the start. Theta applies to Zipf
// and Latest, items to Zipf only; the other kinds ignore them.
func New(kind Kind, theta float64, items, n uint64) (*Params, error) {
	if n == 0 || n > maxKeys {
		return nil, fmt.Errorf("keydist: %d keys: want 1 to 2^62", n)
	}
	p := &Params{Kind: kind, Theta: theta, Items: items, Start: n}
	switch kind {
	case Uniform:
		return p, nil
	case Zipf, Latest:
	default:
		return nil, fmt.Errorf("keydist: unknown distribution %v (choose uniform, zipf or latest)", kind)
	}
	// Gray's method raises to alpha = 1/(1-theta): theta 1 and beyond have
	// no alpha, and at theta <= 0 the popularity no longer falls with rank.
	if !(theta > 0 && theta < 1) {
		return nil, fmt.Errorf("keydist: %v theta %v: want 0 < theta < 1 (YCSB's is %v)", kind, theta, YCSBTheta)
	}
	ranks := items
	switch {
	case kind == Latest:
		ranks = n
	case items == 0:
		ranks = ycsbItems + 1
	case items < 2 || items > maxKeys:
		return nil, fmt.Errorf("keydist: zipf over %d items: want 2 to 2^62 (or 0 for YCSB's scrambled ranks)", items)
	default:
		p.mulA, p.addC = affine(items)
	}
	z := ycsbZeta
	if kind == Latest || items != 0 || theta != YCSBTheta { // YCSB's own zeta otherwise
		z, p.zetaTerms = sumRange(0, ranks, theta)
	}
	p.zipf = newZipfian(ranks, theta, z)
	return p, nil
}

// Sampler draws for one goroutine; it is not safe for concurrent use.
type Sampler struct {
	p      *Params
	latest zipfian // Latest: grown to the largest n drawn from
	mod    fastMod // Zipf: x mod the last n, without a division
	// The next draws, made a batch at a time for bufN keys (dropped when n
	// changes): a draw is a chain of dependent multiplies (power, hash,
	// remainder), and one at a time the benchmark's loop waits for its
	// latency, not its cost; a batch lets them overlap.
	buf  [drawAhead]uint64
	pos  int
	bufN uint64
	// Refilled, when set, is called after each batch: a test's slow
	// sampler, which a benchmark's timed operation must not feel.
	Refilled func()
}

// drawAhead is how many skewed draws a Sampler makes at once.
const drawAhead = 16

// NewSampler returns a goroutine's sampler.
func (p *Params) NewSampler() *Sampler {
	return &Sampler{p: p, latest: p.zipf, pos: drawAhead}
}

// Next draws an index in [0, n). For Latest n is the number of keys that
// exist now: at least the Start keys, more as inserts are acknowledged.
//
// Zipf with Items 0 hashes a rank and takes it mod n, so n must stay fixed
// for the hot keys to stay put: a caller whose keys grow passes a fixed
// space beyond them and draws again past the acknowledged keys, as YCSB
// does. With Items m the hot keys stay put while n >= m. Latest grows its
// zeta as n grows; given a smaller n than before it redraws the ranks that
// fall past the oldest key. Draws are made drawAhead at a time, so one call
// in drawAhead costs that many draws: a caller draws before its clock
// starts.
func (s *Sampler) Next(r *dataset.Rand, n uint64) uint64 {
	if n == 0 {
		panic("keydist: Next over no keys")
	}
	if s.p.Kind == Uniform {
		return r.Below(n)
	}
	if s.pos == drawAhead || s.bufN != n {
		for i := range s.buf {
			s.buf[i] = s.next(r, n)
		}
		s.pos, s.bufN = 0, n
		if s.Refilled != nil {
			s.Refilled()
		}
	}
	s.pos++
	return s.buf[s.pos-1]
}

// next is one draw of Next, made now.
func (s *Sampler) next(r *dataset.Rand, n uint64) uint64 {
	p := s.p
	switch p.Kind {
	case Zipf:
		rank := p.zipf.rank(r.Float64())
		if p.Items == 0 {
			if s.mod.n != n {
				s.mod = newFastMod(n)
			}
			return s.mod.of(fnvhash64(rank))
		}
		i := Permute(rank, p.mulA, p.addC, p.Items)
		if i >= n {
			i %= n
		}
		return i
	case Latest:
		if n > s.latest.n {
			s.grow(n)
		}
		for {
			if rank := s.latest.rank(r.Float64()); rank < n {
				return n - 1 - rank
			}
		}
	}
	return r.Below(n)
}

// grow extends the latest Zipfian to n keys as YCSB's ZipfianGenerator does
// when its item count rises: zeta(n) = zeta(old) + the terms old+1..n. Eta
// follows the new count, as in Gray et al.; YCSB's recomputation keeps its
// first count there.
func (s *Sampler) grow(n uint64) {
	add, _ := sumRange(s.latest.n, n, s.p.Theta)
	s.latest.setCount(n, s.latest.zetan+add)
}
