// Package spin executes a known number of instructions: the injected
// slowdown of the gate's power runs in simulation mode
// (benchstat/lab/power/slowdown).
package spin
