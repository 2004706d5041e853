//go:build kvbench_slowdown

// This file is no part of the suite on disk: kvb power adds it, as
// kvbench_slowdown_test.go, to the one build of the suite it slows (go
// test -c -overlay, benchstat/lab/power/slowdown.go). Every engine's
// point read then also spins a calibrated busy loop: a known slowdown
// against which the regression gate's power is measured (docs/gating.md).
// KVBENCH_SLOWDOWN gives the extra work per read by engine, as time
// ("bolt=45ns,pebble=210ns", a loop calibrated at start) or as
// instructions ("bolt=22instr", a countdown of exactly that many, for
// counting under callgrind, amd64 only), and applies on the head side only
// when kvb compare runs the binary (KVBENCH_SIDE), so one binary on both
// sides differs by the loop alone, not by its build. This package's init
// runs after every package it imports, so after every engine's
// registration.
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

// spinSink keeps the busy loop from being optimised away.
var spinSink uint64

func busy(n int) {
	x := spinSink
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	spinSink = x
}

// spinsPerNs calibrates the loop: the best of five timings of n spins
// (about 2 ms each).
func spinsPerNs() float64 {
	const n = 2_000_000
	best := time.Duration(1 << 62)
	for range 5 {
		t := time.Now()
		busy(n)
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
		var work func()
		var what string
		if n, isInstr := strings.CutSuffix(d, "instr"); isInstr {
			instr, err := strconv.Atoi(n)
			ok = ok && err == nil && instr >= 0
			steps := instr / spin.InstrPerStep
			if base {
				steps = 0
			}
			work, what = func() { spin.Countdown(steps) }, fmt.Sprintf("%d instructions (%d steps)", steps*spin.InstrPerStep, steps)
		} else {
			delay, err := time.ParseDuration(d)
			ok = ok && err == nil
			if rate == 0 {
				rate = spinsPerNs()
			}
			spins := int(rate * float64(delay.Nanoseconds()))
			if base {
				spins = 0
			}
			work, what = func() { busy(spins) }, fmt.Sprintf("%v (%d spins)", delay, spins)
		}
		if !ok || !engine.SlowReads(name, work) {
			fmt.Fprintf(os.Stderr, "KVBENCH_SLOWDOWN %q: want engine=duration or engine=<n>instr,... with registered engines\n", part)
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "kvbench: %s reads slowed by %s\n", name, what)
	}
}
