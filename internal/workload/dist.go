package workload

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/keydist"
)

// The key distributions of the timed reads and writes (docs/workloads.md,
// "Key distributions"): -dist names the ones a family runs, a dimension of
// its own (dist=zipf); -zipf_theta and -zipf_items shape zipf and latest.

var distFlag = &core.Flag[core.WordList]{Name: "dist",
	Usage: "comma-separated key distributions of ReadRandom, Load and YCSB, one sub-benchmark each: uniform, zipf (YCSB's scrambled Zipfian), latest (YCSB's skewed latest); unset, ReadRandom and Load read uniformly and each YCSB workload uses its own (ReadRandom and Load name every one but uniform in their leaves, dist=zipf)",
	Check: func(l core.WordList, _ *core.Config) error {
		var errs []error
		for i, d := range l {
			if _, err := keydist.ParseKind(d); err != nil {
				errs = append(errs, core.FlagError("dist", d, "must be one of uniform, zipf, latest"))
			} else if slices.Contains(l[:i], d) {
				errs = append(errs, core.FlagError("dist", d, "is listed twice"))
			}
		}
		return errors.Join(errs...)
	},
	Echo: func(l core.WordList, _ *core.Config, line func(string, any)) {
		if len(l) == 0 {
			line("dist", "each family's default (ReadRandom, Load: uniform; YCSB: the workload's own)")
			return
		}
		line("dist", l.String())
	}}

var zipfThetaFlag = &core.Flag[float64]{Name: "zipf_theta", Default: keydist.YCSBTheta,
	Usage: "the Zipfian constant of -dist zipf and latest (YCSB's 0.99)",
	Check: func(t float64, c *core.Config) error {
		_, err := keydist.New(keydist.Zipf, t, 0, max(c.Keys(), 1))
		return err
	}}

var zipfItemsFlag = &core.Flag[uint64]{Name: "zipf_items",
	Usage: "the items -dist zipf draws its ranks over: 0 is YCSB's 10^10, hashed onto the keys (the hottest key gets ~3.8 % of draws at theta 0.99); n is a Zipfian over n ranks, as pebble bench ycsb draws (5.5-7.8 % at 10^5-10^7 keys)",
	Check: func(n uint64, c *core.Config) error {
		if n == 1 {
			return errors.New("must be 0 or at least 2")
		}
		return nil
	},
	Echo: func(n uint64, _ *core.Config, line func(string, any)) {
		if n == 0 {
			line("zipf-items", "0 (YCSB's scrambled Zipfian over 10^10 ranks, FNV-1a hashed mod the keys)")
			return
		}
		line("zipf-items", n)
	}}

// distOptions are the flags of every family with a dist dimension.
var distOptions = []core.Option{distFlag, zipfThetaFlag, zipfItemsFlag}

// dists is what a family runs: -dist, or def when it is not given.
func dists(c *core.Config, def ...string) []string {
	if l := distFlag.Get(c); len(l) > 0 {
		return l
	}
	return def
}

// distName is the value of a ReadRandom or Load leaf's dist= level: ""
// for uniform, which SubName leaves out (docs/workloads.md, "Key
// distributions", says why); the distribution's name for the others.
func distName(d string) string {
	if d == "uniform" {
		return ""
	}
	return d
}

// distCache holds the distributions keyDist built, by their parameters.
var distCache sync.Map

// keyDist is the distribution d over the data set's keys at the run's
// -zipf_theta and -zipf_items, built once per run (latest's zeta sums up to
// millions of terms) and shared by every goroutine that draws from it.
func keyDist(tb testing.TB, e *core.Env, d string) *keydist.Params {
	tb.Helper()
	kind, err := keydist.ParseKind(d)
	fatalIf(tb, err)
	theta, items, n := zipfThetaFlag.Get(&e.Cfg), zipfItemsFlag.Get(&e.Cfg), e.Keys
	key := fmt.Sprint(d, theta, items, n)
	if p, ok := distCache.Load(key); ok {
		return p.(*keydist.Params)
	}
	p, err := keydist.New(kind, theta, items, n)
	fatalIf(tb, err)
	distCache.Store(key, p)
	return p
}
