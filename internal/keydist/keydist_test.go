package keydist

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aclements/go-moremath/mathx"

	"github.com/kvbench/kvbench/internal/dataset"
)

func mustNew(t testing.TB, kind Kind, theta float64, items, n uint64) *Params {
	t.Helper()
	p, err := New(kind, theta, items, n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// drawCounts counts how often each index in [0, n) is drawn.
func drawCounts(p *Params, n uint64, draws int, stream uint64) []int {
	counts := make([]int, n)
	s, r := p.NewSampler(), dataset.NewRand(1, stream)
	for range draws {
		counts[s.Next(&r, n)]++
	}
	return counts
}

// exactZeta adds every term (compensated): the reference for zeta. Each term
// is within 1e-14 of i^-theta, and fast under the race detector.
func exactZeta(n uint64, theta float64) float64 {
	sum, comp := 0.0, 0.0
	for i := n; i > 0; i-- {
		sum, comp = addComp(sum, comp, math.Exp(-theta*math.Log(float64(i))))
	}
	return sum + comp
}

// grayCDF is P(rank < k) for z's draws, from the inverse rank applies:
// below rank 2 the exact Zipf probabilities, above it rank < k while
// n*(1 - eta*(1-u))^alpha < k.
func grayCDF(z *zipfian, k uint64) float64 {
	switch {
	case k == 0:
		return 0
	case k == 1:
		return 1 / z.zetan
	case k == 2:
		return z.zeta2 / z.zetan
	case k >= z.n:
		return 1
	}
	return 1 + math.Expm1((1-z.theta)*math.Log(float64(k)/z.fn))/z.eta
}

// checkShare asserts that count of draws is within 5 binomial standard
// deviations of the probability want.
func checkShare(t *testing.T, what string, count, draws int, want float64) {
	t.Helper()
	got := float64(count) / float64(draws)
	sd := math.Sqrt(want * (1 - want) / float64(draws))
	if math.Abs(got-want) > 5*sd {
		t.Errorf("%s: share %.5f, want %.5f ± %.5f", what, got, want, 5*sd)
	}
}

// chiSquareP is the p-value of counts against the probabilities probs:
// the chi-squared distribution's survival function, Q(k/2, x/2) of the
// regularized incomplete gamma function (go-moremath's, which x/perf's
// statistics use; it converges for up to about 1,200 bins).
func chiSquareP(counts []int, probs []float64) float64 {
	draws := 0
	for _, c := range counts {
		draws += c
	}
	stat := 0.0
	for i, c := range counts {
		e := float64(draws) * probs[i]
		stat += (float64(c) - e) * (float64(c) - e) / e
	}
	return mathx.GammaIncComp(float64(len(counts)-1)/2, stat/2)
}

func TestParseKind(t *testing.T) {
	for _, k := range []Kind{Uniform, Zipf, Latest} {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	_, err := ParseKind("zipfian")
	if err == nil || !strings.Contains(err.Error(), "uniform, zipf or latest") {
		t.Errorf("ParseKind(zipfian): %v, want an error listing the choices", err)
	}
}

func TestNewRejects(t *testing.T) {
	for _, c := range []struct {
		kind     Kind
		theta    float64
		items, n uint64
		want     string
	}{
		{Zipf, 0, 0, 100, "theta 0"},
		{Zipf, -0.5, 0, 100, "theta -0.5"},
		{Zipf, 1, 0, 100, "theta 1"},
		{Latest, 1, 0, 100, "theta 1"},
		{Zipf, 1.2, 0, 100, "theta 1.2"},
		{Zipf, math.NaN(), 0, 100, "theta NaN"},
		{Latest, math.Inf(1), 0, 100, "theta +Inf"},
		{Zipf, 0.99, 1, 100, "1 items"},
		{Zipf, 0.99, 1<<62 + 1, 100, "items"},
		{Zipf, 0.99, 0, 0, "0 keys"},
		{Uniform, 0, 0, 0, "0 keys"},
		{Latest, 0.99, 0, 1<<62 + 1, "keys"},
		{Kind(7), 0.99, 0, 100, "unknown distribution"},
	} {
		_, err := New(c.kind, c.theta, c.items, c.n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%v, %v, %d, %d) = %v, want an error naming %q", c.kind, c.theta, c.items, c.n, err, c.want)
		}
	}
	// What a kind does not use is not checked.
	mustNew(t, Uniform, 0, 1, 1)
	mustNew(t, Latest, 0.5, 1, 1)
	mustNew(t, Zipf, 0.99, 2, 1)
}

// The hottest key gets 1/zeta of the draws: of the items for a Zipfian over
// items, YCSB's constant for the scrambled default whatever n is.
func TestHottestShare(t *testing.T) {
	const m, draws = 1000, 400_000
	p := mustNew(t, Zipf, YCSBTheta, m, m)
	hot := Permute(0, p.mulA, p.addC, m)
	if hot == 0 {
		t.Error("rank 0 is index 0, the first key inserted")
	}
	counts := drawCounts(p, m, draws, 1)
	checkShare(t, "zipf over 1000 items, rank 0", counts[hot], draws, 1/exactZeta(m, YCSBTheta))
	if slices.Max(counts) != counts[hot] {
		t.Error("zipf over 1000 items: rank 0's index is not the most drawn")
	}

	const n = 100_000
	p = mustNew(t, Zipf, YCSBTheta, 0, n)
	counts = drawCounts(p, n, draws, 2)
	hot = fnvhash64(0) % n
	checkShare(t, "scrambled zipf, rank 0", counts[hot], draws, 1/ycsbZeta)
	if slices.Max(counts) != counts[hot] {
		t.Error("scrambled zipf: rank 0's index is not the most drawn")
	}
}

func TestYCSBZeta(t *testing.T) {
	z, terms := sumRange(0, ycsbItems, YCSBTheta)
	if terms != exactTerms {
		t.Errorf("zeta(10^10) added %d terms one by one, want %d", terms, exactTerms)
	}
	t.Logf("sumRange(0, 10^10, 0.99) = %.17g, YCSB's ZETAN %.17g", z, ycsbZeta)
	if rel := math.Abs(z/ycsbZeta - 1); rel > 1e-9 {
		t.Errorf("sumRange(0, 10^10, 0.99) = %.15g, YCSB's ZETAN %.15g (relative difference %.2g)", z, ycsbZeta, rel)
	}
	p := mustNew(t, Zipf, YCSBTheta, 0, 1000)
	if p.zipf.zetan != ycsbZeta || p.zetaTerms != 0 || p.zipf.n != ycsbItems+1 {
		t.Errorf("theta 0.99: zeta %v over %d ranks (%d terms added), want YCSB's ZETAN as is over 10^10+1", p.zipf.zetan, p.zipf.n, p.zetaTerms)
	}
}

func TestZetaApproximation(t *testing.T) {
	const n = 10_000_000
	for _, theta := range []float64{0.5, YCSBTheta} {
		got, terms := sumRange(0, n, theta)
		if terms != exactTerms {
			t.Errorf("theta %v: %d terms added one by one, want %d", theta, terms, exactTerms)
		}
		if want := exactZeta(n, theta); math.Abs(got/want-1) > 1e-12 {
			t.Errorf("sumRange(0, 10^7, %v) = %.17g, every term added: %.17g", theta, got, want)
		}
	}
	// The tail formula alone, from a start where its remainder is large
	// enough to see, stays within the bound emTail states.
	const s, b, theta = 11, 1_000_000, YCSBTheta
	err := emTail(s, b, theta) - (exactZeta(b, theta) - exactZeta(s-1, theta))
	if bound := theta * (theta + 1) * (theta + 2) * math.Pow(s, -theta-3) / 720; math.Abs(err) > bound+1e-12 {
		t.Errorf("emTail(%d, %d): error %.3g, bound %.3g", s, b, err, bound)
	}
}

// New approximates the zeta of a large n instead of adding every term.
func TestStartUpApproximates(t *testing.T) {
	const n = 1_000_000_000
	p := mustNew(t, Latest, 0.5, 0, n)
	if p.zetaTerms != exactTerms {
		t.Errorf("latest over 10^9 keys: %d terms added one by one, want %d", p.zetaTerms, exactTerms)
	}
	// sum of i^-1/2 for i <= n = 2√n + ζ(1/2) + 1/(2√n) - O(n^-1.5)
	want := 2*math.Sqrt(n) - 1.4603545088095868 + 0.5/math.Sqrt(n)
	if got := p.zipf.zetan; math.Abs(got/want-1) > 1e-13 {
		t.Errorf("sumRange(0, 10^9, 0.5) = %.17g, want %.17g", got, want)
	}
	for _, items := range []uint64{0, n} {
		if p := mustNew(t, Zipf, 0.5, items, 1000); p.zetaTerms != exactTerms {
			t.Errorf("zipf over %d items at theta 0.5: %d terms added one by one, want %d", items, p.zetaTerms, exactTerms)
		}
	}
}

// Draws of the Zipfian over m items fit the distribution Gray et al.'s
// method draws; a uniform sampler's do not, and neither does the exact Zipf
// distribution: the method approximates it above rank 1 (rank 2 comes 17 %
// too often at m = 1000), and YCSB's distribution is the method's.
func TestChiSquare(t *testing.T) {
	const m, draws = 1000, 200_000
	p := mustNew(t, Zipf, YCSBTheta, m, m)
	gray, exact := make([]float64, m), make([]float64, m)
	for rank := range uint64(m) {
		i := Permute(rank, p.mulA, p.addC, m)
		gray[i] = grayCDF(&p.zipf, rank+1) - grayCDF(&p.zipf, rank)
		exact[i] = math.Pow(float64(rank+1), -YCSBTheta) / p.zipf.zetan
		if ratio := gray[i] / exact[i]; ratio < 0.96 || ratio > 1.18 {
			t.Errorf("rank %d: Gray's probability %.3g times the exact one", rank, ratio)
		}
	}
	zipfCounts := drawCounts(p, m, draws, 3)
	uniformCounts := drawCounts(mustNew(t, Uniform, 0, 0, m), m, draws, 3)
	t.Logf("p-values: zipf against Gray's %.3g, uniform against Gray's %.3g, zipf against exact Zipf %.3g",
		chiSquareP(zipfCounts, gray), chiSquareP(uniformCounts, gray), chiSquareP(zipfCounts, exact))
	if pv := chiSquareP(zipfCounts, gray); pv < 0.001 {
		t.Errorf("zipf draws against Gray's distribution: p = %.3g", pv)
	}
	if pv := chiSquareP(uniformCounts, gray); pv >= 0.001 {
		t.Errorf("uniform draws against Gray's distribution: p = %.3g, want < 0.001", pv)
	}
	if pv := chiSquareP(zipfCounts, exact); pv >= 0.001 {
		t.Errorf("zipf draws against the exact Zipf distribution: p = %.3g, want < 0.001", pv)
	}
}

// topShare is the share of draws of the hottest k indices.
func topShare(counts []int, k int) float64 {
	sorted := slices.Clone(counts)
	slices.Sort(sorted)
	slices.Reverse(sorted)
	top, all := 0, 0
	for i, c := range sorted {
		if i < k {
			top += c
		}
		all += c
	}
	return float64(top) / float64(all)
}

// The scrambled Zipfian's probabilities are out of reach (10^10 ranks), so
// instead of a chi-square: its hottest 1 % of keys get far more than 1 %.
func TestScrambledSkew(t *testing.T) {
	const n, draws = 1000, 200_000
	zipf := topShare(drawCounts(mustNew(t, Zipf, YCSBTheta, 0, n), n, draws, 4), n/100)
	uniform := topShare(drawCounts(mustNew(t, Uniform, 0, 0, n), n, draws, 4), n/100)
	t.Logf("hottest 1 %% of keys: %.4f of scrambled zipf's draws, %.4f of uniform's", zipf, uniform)
	if zipf < 0.08 || uniform > 0.015 {
		t.Errorf("hottest 1 %% of keys: %.3f of scrambled zipf's draws, %.3f of uniform's; want > 0.08 and < 0.015", zipf, uniform)
	}
}

// spread asserts that positions (of n) span more than half of them and hold
// no run of more than 3 adjacent ones.
func spread(t *testing.T, what string, pos []int, n int) {
	t.Helper()
	slices.Sort(pos)
	run, longest := 1, 1
	for i := 1; i < len(pos); i++ {
		if pos[i] == pos[i-1]+1 {
			run++
		} else {
			run = 1
		}
		longest = max(longest, run)
	}
	if span := pos[len(pos)-1] - pos[0]; span <= n/2 || longest > 3 {
		t.Errorf("%s: span %d of %d, longest run %d; want > half and <= 3", what, span, n, longest)
	}
}

// The hot keys lie all over the key order, and for a Zipfian over items all
// over the insertion order too.
func TestHotKeysScattered(t *testing.T) {
	const n, draws, hot = 100_000, 400_000, 100
	counts := drawCounts(mustNew(t, Zipf, YCSBTheta, 0, n), n, draws, 5)
	byHeat := make([]int, n)
	for i := range byHeat {
		byHeat[i] = i
	}
	slices.SortStableFunc(byHeat, func(a, b int) int { return counts[b] - counts[a] })

	g, err := dataset.New(dataset.Spec{Keys: n, ValueSize: 16, ValueRatio: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, n)
	buf := make([]byte, dataset.KeySize)
	for i := range keys {
		keys[i] = string(g.Key(buf, uint64(i)))
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	pos := make([]int, hot)
	for j, i := range byHeat[:hot] {
		pos[j], _ = slices.BinarySearch(sorted, keys[i])
	}
	spread(t, "scrambled zipf's hottest 100 keys in key order", pos, n)

	p := mustNew(t, Zipf, YCSBTheta, n, n)
	for rank := range pos {
		pos[rank] = int(Permute(uint64(rank), p.mulA, p.addC, n))
	}
	spread(t, "zipf over items: the hottest 100 indices", pos, n)
}

// The Zipfian over items gives its hottest 0.1 %, 1 % and 10 % of ranks the
// shares of Gray's distribution, within 1.2, 0.8 and 0.4 points of the exact
// Zipf distribution's 41.4 %, 60.5 % and 80.0 %.
func TestTopRankShares(t *testing.T) {
	const n, draws = 100_000, 1_000_000
	p := mustNew(t, Zipf, YCSBTheta, n, n)
	rankOf := make([]uint64, n)
	for rank := range uint64(n) {
		rankOf[Permute(rank, p.mulA, p.addC, n)] = rank
	}
	byRank := make([]int, n)
	for i, c := range drawCounts(p, n, draws, 6) {
		byRank[rankOf[i]] = c
	}
	zn := exactZeta(n, YCSBTheta)
	for _, c := range []struct {
		ranks      uint64
		exact, tol float64
	}{{n / 1000, 0.414, 0.015}, {n / 100, 0.605, 0.01}, {n / 10, 0.800, 0.01}} {
		top := 0
		for _, k := range byRank[:c.ranks] {
			top += k
		}
		got := float64(top) / draws
		t.Logf("top %d ranks: share %.4f, Gray's %.4f, exact Zipf %.4f", c.ranks, got, grayCDF(&p.zipf, c.ranks), exactZeta(c.ranks, YCSBTheta)/zn)
		if e := exactZeta(c.ranks, YCSBTheta) / zn; math.Abs(e-c.exact) > 0.0005 {
			t.Fatalf("top %d ranks: the exact Zipf share is %.4f, not %.3f", c.ranks, e, c.exact)
		}
		if gray := grayCDF(&p.zipf, c.ranks); math.Abs(got-gray) > 0.003 {
			t.Errorf("top %d ranks: share %.4f, Gray's distribution %.4f", c.ranks, got, gray)
		}
		if math.Abs(got-c.exact) > c.tol {
			t.Errorf("top %d ranks: share %.4f, exact Zipf %.3f ± %.3f", c.ranks, got, c.exact, c.tol)
		}
	}
}

func TestLatest(t *testing.T) {
	const start, grown = 1000, 50_000
	p := mustNew(t, Latest, YCSBTheta, 0, start)
	s, r := p.NewSampler(), dataset.NewRand(1, 7)
	var byAge [10]int
	for n := uint64(start); n <= grown; n++ {
		for range 4 {
			i := s.Next(&r, n)
			if i >= n {
				t.Fatalf("n %d: drew %d", n, i)
			}
			if age := n - 1 - i; age < uint64(len(byAge)) {
				byAge[age]++
			}
		}
	}
	if slices.Max(byAge[:]) != byAge[0] || byAge[0] == byAge[1] {
		t.Errorf("draws by age (0 = newest key): %v; want the newest hottest", byAge)
	}
	checkZeta := func(n uint64) {
		t.Helper()
		if s.latest.n != n {
			t.Fatalf("sampler grown to %d keys, want %d", s.latest.n, n)
		}
		if want := exactZeta(n, YCSBTheta); math.Abs(s.latest.zetan/want-1) > 1e-9 {
			t.Errorf("zeta grown to %d keys: %.15g, every term added: %.15g", n, s.latest.zetan, want)
		}
	}
	checkZeta(grown)
	if p.zipf.n != start {
		t.Errorf("a sampler's growth changed the shared Params (%d keys)", p.zipf.n)
	}

	// A jump past exactTerms grows by the tail formula.
	const n = grown + exactTerms + 4096
	if i := s.Next(&r, n); i >= n {
		t.Fatalf("n %d: drew %d", n, i)
	}
	checkZeta(n)
	const draws = 200_000
	var newest [100]int
	for range draws {
		if age := n - 1 - s.Next(&r, n); age < uint64(len(newest)) {
			newest[age]++
		}
	}
	checkShare(t, "latest, the newest key", newest[0], draws, 1/s.latest.zetan)
	if slices.Max(newest[:]) != newest[0] {
		t.Error("latest: the newest key is not the most drawn")
	}

	// Fewer keys than the sampler has seen (never fewer than at the start).
	for range 10_000 {
		if i := s.Next(&r, start); i >= start {
			t.Fatalf("n %d after %d: drew %d", start, n, i)
		}
	}
}

func TestNextInRange(t *testing.T) {
	for _, c := range []struct {
		kind     Kind
		items, n uint64
	}{
		{Uniform, 0, 7}, {Zipf, 0, 1}, {Zipf, 0, 7}, {Zipf, 1000, 7}, {Zipf, 5, 1000}, {Latest, 0, 1}, {Latest, 0, 2},
	} {
		p := mustNew(t, c.kind, YCSBTheta, c.items, c.n)
		limit := c.n
		if c.items > 0 {
			limit = min(c.items, c.n)
		}
		s, r := p.NewSampler(), dataset.NewRand(1, 8)
		for range 20_000 {
			if i := s.Next(&r, c.n); i >= limit {
				t.Fatalf("%v over %d items, %d keys: drew %d", c.kind, c.items, c.n, i)
			}
		}
	}
}

func TestNextAllocatesNothing(t *testing.T) {
	for _, kind := range []Kind{Uniform, Zipf, Latest} {
		s, r := mustNew(t, kind, YCSBTheta, 0, 1000).NewSampler(), dataset.NewRand(1, 9)
		n := uint64(1000)
		if a := testing.AllocsPerRun(1000, func() { n++; s.Next(&r, n) }); a != 0 {
			t.Errorf("%v: %v allocations per draw", kind, a)
		}
	}
}

// Samplers of one Params draw in parallel (meant for -race).
func TestSamplersShareParams(t *testing.T) {
	p := mustNew(t, Latest, YCSBTheta, 0, 1000)
	var wg sync.WaitGroup
	for g := range uint64(2) {
		wg.Go(func() {
			s, r := p.NewSampler(), dataset.NewRand(1, 10+g)
			for n := uint64(1000); n < 6000; n++ {
				if i := s.Next(&r, n); i >= n {
					t.Errorf("n %d: drew %d", n, i)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestFNVIsYCSBs(t *testing.T) {
	r := dataset.NewRand(1, 11)
	for k := range 2000 {
		v := r.Uint64() >> (k % 64) // short values (all of YCSB's ranks) and long ones
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		h := fnv.New64a()
		h.Write(b[:])
		want := h.Sum64()
		if int64(want) < 0 {
			want = -want // Java's Math.abs
		}
		if got := fnvhash64(v); got != want {
			t.Fatalf("fnvhash64(%#x) = %#x, want %#x", v, got, want)
		}
	}
}

func TestAffineIsBijection(t *testing.T) {
	for _, m := range []uint64{2, 3, 10, 1000, 1024, 65536, 99991, 100_000} {
		a, c := affine(m)
		seen := make([]bool, m)
		for rank := range m {
			i := Permute(rank, a, c, m)
			if i >= m || seen[i] {
				t.Fatalf("m %d: rank %d maps to %d, out of range or taken", m, rank, i)
			}
			seen[i] = true
		}
		if m > 2 && c == 0 {
			t.Errorf("m %d: rank 0 maps to index 0", m)
		}
	}
	const m = 1 << 62
	a, c := affine(m)
	if GCD(a, m) != 1 || Permute(m-1, a, c, m) >= m {
		t.Errorf("m 2^62: a %d, c %d", a, c)
	}
}

func TestPowAccuracy(t *testing.T) {
	r := dataset.NewRand(1, 12)
	for _, a := range []float64{1.0000001, 1.5, 2, 1 / (1 - YCSBTheta), 1e4, 1e6} {
		for k := range 100_000 {
			b := 1 - r.Float64()
			if k%2 == 1 {
				b = math.Exp2(-62 * r.Float64())
			}
			y := a * math.Log(b)
			if y < -700 {
				continue
			}
			// pow's and math.Pow's errors together
			if got, want := pow(b, a), math.Pow(b, a); math.Abs(got/want-1) > 1e-15*(1+math.Abs(y)+a) {
				t.Fatalf("pow(%.17g, %v) = %.17g, math.Pow %.17g", b, a, got, want)
			}
		}
	}
}

func BenchmarkNext(b *testing.B) {
	const n = 1_000_000
	for _, c := range []struct {
		name  string
		kind  Kind
		items uint64
	}{{"uniform", Uniform, 0}, {"zipf", Zipf, 0}, {"zipf-items", Zipf, n}, {"latest", Latest, 0}} {
		p := mustNew(b, c.kind, YCSBTheta, c.items, n)
		b.Run(c.name, func(b *testing.B) {
			s, r := p.NewSampler(), dataset.NewRand(1, 13)
			var sum uint64
			for b.Loop() {
				sum += s.Next(&r, n)
			}
			if sum == 0 {
				b.Fatal("every draw was 0")
			}
		})
	}
}
