//go:build kvbench_slowdown

// This file is no part of the suite on disk: kvb power adds it, as
// kvbench_slowdown_test.go, to the one build of the suite it slows (go
// test -c -overlay, benchstat/lab/power/slowdown.go). Every engine's
// point read then also spins a calibrated busy loop: a known slowdown
// against which the regression gate's power is measured (docs/gating.md).
// KVBENCH_SLOWDOWN gives the extra work per read by engine, as time
// ("bolt=45ns,memory=0.8ns", a loop calibrated at start, a fraction of a
// spin kept on average) or as instructions ("bolt=22instr", a countdown
// of exactly that many, for counting under callgrind, amd64 only), and
// applies on the head side only when kvb compare runs the binary
// (KVBENCH_SIDE), so one binary on both sides differs by the loop alone,
// not by its build. This package's init runs after every package it
// imports, so after every engine's registration.
package kvbench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/spin"
)

// busy is n steps of a chain of multiplications from x: each waits for
// the one before, so n of them take n times one's latency.
func busy(x uint64, n int) uint64 {
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// opaqueZero is 0 in a variable, so that the compiler cannot fold what is
// masked with it. A slowed read's loop starts from the key's first byte,
// and the key the engine looks up starts at the loop's result masked with
// it: the loop runs after the key is made and before the lookup. A loop
// nothing waits for runs beside the read's own work, and a delay of a few
// nanoseconds then adds next to nothing.
var opaqueZero uint64

// spinSink keeps the calibration's loop from being optimised away.
var spinSink uint64

// spinsPerNs calibrates the loop: the best of five timings of n spins
// (about 2 ms each).
func spinsPerNs() float64 {
	const n = 2_000_000
	best := time.Duration(1 << 62)
	for range 5 {
		t := time.Now()
		spinSink = busy(spinSink, n)
		best = min(best, time.Since(t))
	}
	return n / float64(best.Nanoseconds())
}

func init() {
	spec := os.Getenv("KVBENCH_SLOWDOWN")
	if spec == "" {
		return
	}
	// The base side runs the same wrapper with no work, so the sides
	// differ by the loop alone, not by an extra call per read.
	base := os.Getenv("KVBENCH_SIDE") == "base"
	var rate float64
	for _, part := range strings.Split(spec, ",") {
		name, d, ok := strings.Cut(part, "=")
		var newWork func() func([]byte) int
		var what string
		if n, isInstr := strings.CutSuffix(d, "instr"); isInstr {
			instr, err := strconv.Atoi(n)
			ok = ok && err == nil && instr >= 0
			steps := instr / spin.InstrPerStep
			if base {
				steps = 0
			}
			work := func([]byte) int { spin.Countdown(steps); return 0 }
			newWork, what = func() func([]byte) int { return work }, fmt.Sprintf("%d instructions (%d steps)", steps*spin.InstrPerStep, steps)
		} else {
			ns, err := parseNs(d)
			ok = ok && err == nil && ns >= 0
			if rate == 0 {
				rate = spinsPerNs()
			}
			spins := rate * ns
			if base {
				spins = 0
			}
			// A delay of a fraction of a spin (a few percent of a read of
			// tens of nanoseconds) is kept on average: each reader carries
			// the fraction left over to its next read.
			newWork = func() func([]byte) int {
				var owed float64
				return func(key []byte) int {
					owed += spins
					n := int(owed)
					owed -= float64(n)
					return int(busy(uint64(key[0]), n) & opaqueZero)
				}
			}
			what = fmt.Sprintf("%s (%.2f spins)", d, spins)
		}
		if !ok || !engine.SlowReads(name, newWork) {
			fmt.Fprintf(os.Stderr, "KVBENCH_SLOWDOWN %q: want engine=duration or engine=<n>instr,... with registered engines\n", part)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "kvbench: %s reads slowed by %s\n", name, what)
	}
}

// parseNs is a delay in nanoseconds: "0.8ns" keeps its fraction, which
// time.ParseDuration would drop; other units as time.ParseDuration reads them.
func parseNs(s string) (float64, error) {
	if n, ok := strings.CutSuffix(s, "ns"); ok {
		return strconv.ParseFloat(n, 64)
	}
	d, err := time.ParseDuration(s)
	return float64(d.Nanoseconds()), err
}
