//go:build kvbench_slowdown

// Under the kvbench_slowdown build tag only, every engine's point read
// also spins a calibrated busy loop: a known slowdown against which the
// regression gate's power is measured (benchstat/power, docs/gating.md).
// KVBENCH_SLOWDOWN gives the extra time per read by engine, as
// "bolt=45ns,pebble=210ns", and applies on the head side only when
// compare.sh runs the binary (KVBENCH_SIDE), so one binary on both sides
// differs by the loop alone, not by its build. No Makefile target and no test build sets the
// tag outside that measurement; the file is named to run its init after
// every engine's registration.
package engine

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// spinSink keeps the busy loop from being optimised away.
var spinSink uint64

func spin(n int) {
	x := spinSink
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	spinSink = x
}

// spinsPerNs calibrates the loop: the best of five 20 ms timings.
func spinsPerNs() float64 {
	const n = 2_000_000
	best := time.Duration(1 << 62)
	for range 5 {
		t := time.Now()
		spin(n)
		best = min(best, time.Since(t))
	}
	return n / float64(best.Nanoseconds())
}

func init() {
	spec := os.Getenv("KVBENCH_SLOWDOWN")
	if spec == "" || os.Getenv("KVBENCH_SIDE") == "base" {
		return
	}
	rate := spinsPerNs()
	for _, part := range strings.Split(spec, ",") {
		name, d, ok := strings.Cut(part, "=")
		delay, err := time.ParseDuration(d)
		info, known := registry[name]
		if !ok || err != nil || !known {
			fmt.Fprintf(os.Stderr, "KVBENCH_SLOWDOWN %q: want engine=duration,... with registered engines\n", part)
			os.Exit(2)
		}
		spins := int(rate * float64(delay.Nanoseconds()))
		open := info.Open
		info.Open = func(o Options) (DB, error) {
			db, err := open(o)
			if err != nil {
				return nil, err
			}
			return slowDB{db, spins}, nil
		}
		registry[name] = info
		fmt.Fprintf(os.Stderr, "kvbench: %s reads slowed by %v (%d spins)\n", name, delay, spins)
	}
}

type slowDB struct {
	DB
	spins int
}

func (d slowDB) NewReader() (Reader, error) {
	r, err := d.DB.NewReader()
	return slowReader{r, d.spins}, err
}

type slowReader struct {
	Reader
	spins int
}

func (r slowReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	spin(r.spins)
	return r.Reader.Get(key, fn)
}
