// Package valgrind makes Valgrind client requests from Go without cgo:
// the magic instruction sequence Valgrind recognises (valgrind.h's
// VALGRIND_DO_CLIENT_REQUEST on amd64), written in assembly. Outside
// Valgrind the sequence is four rotations that leave a register as it was
// and an exchange of a register with itself: 1.2–1.4 ns a request here
// (BenchmarkZeroStats), and every request returns its default.
package valgrind

import (
	"strconv"
	"strings"
)

// request runs client request args[0] with arguments args[1:] and returns
// Valgrind's answer, or def when the program is not running under it.
//
//go:noescape
func request(args *[6]uintptr, def uintptr) uintptr

// Core and callgrind request codes (valgrind.h, callgrind.h).
const (
	runningOnValgrind = 0x1001
	callgrindBase     = 'C'<<24 | 'T'<<16
	dumpStats         = callgrindBase + 0
	zeroStats         = callgrindBase + 1
	toggleCollect     = callgrindBase + 2
	dumpStatsAt       = callgrindBase + 3
	startInstr        = callgrindBase + 4
	stopInstr         = callgrindBase + 5
)

// Running reports whether the program runs under Valgrind.
func Running() bool {
	args := [6]uintptr{runningOnValgrind}
	return request(&args, 0) != 0
}

// ZeroStats zeroes callgrind's counters (CALLGRIND_ZERO_STATS).
func ZeroStats() {
	args := [6]uintptr{zeroStats}
	request(&args, 0)
}

// DumpStatsAt writes callgrind's counters since the last zero or dump to a
// file of their own, described by reason (CALLGRIND_DUMP_STATS_AT), and
// zeroes them. reason must end in a NUL byte.
func DumpStatsAt(reason []byte) {
	args := [6]uintptr{dumpStatsAt, uintptrOf(reason)}
	request(&args, 0)
}

// StartInstrumentation makes callgrind instrument the code it runs from
// here on (CALLGRIND_START_INSTRUMENTATION); with --instr-atstart=no the
// program runs uninstrumented, several times faster, until it is called.
func StartInstrumentation() {
	args := [6]uintptr{startInstr}
	request(&args, 0)
}

// StopInstrumentation ends instrumentation (CALLGRIND_STOP_INSTRUMENTATION).
func StopInstrumentation() {
	args := [6]uintptr{stopInstr}
	request(&args, 0)
}

// windowPrefix starts the description of every dump a benchmark's timed
// window asks for: "kvbench <leaf> n=<b.N>".
const windowPrefix = "kvbench "

// WindowReason is the NUL-terminated dump description of leaf's timed
// window over n iterations, for DumpStatsAt.
func WindowReason(leaf string, n int) []byte {
	return append([]byte(windowPrefix+leaf+" n="), strconv.Itoa(n)+"\x00"...)
}

// ParseWindow reads back a description WindowReason wrote (without its
// NUL); ok is false for any other dump's.
func ParseWindow(desc string) (leaf string, n int64, ok bool) {
	rest, ok := strings.CutPrefix(desc, windowPrefix)
	i := strings.LastIndex(rest, " n=")
	if !ok || i < 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(rest[i+3:], 10, 64)
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return rest[:i], n, true
}
