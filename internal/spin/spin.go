// Package spin executes a known number of instructions: the injected
// slowdown that measures the regression gate in simulation mode, where an
// instruction count, not a time, is what must be calibrated
// (internal/engine's kvbench_slowdown build, benchstat/power -mode sim).
package spin
