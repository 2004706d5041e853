// Package spin executes a known number of instructions: the injected
// slowdown that measures the regression gate in simulation mode, where an
// instruction count, not a time, is what must be calibrated
// (the slowed build of the suite that the lab's kvb power -mode sim lays
// over it, benchstat/lab/power/slowdown).
package spin
