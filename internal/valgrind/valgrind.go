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
	"unsafe"
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
	zeroStats         = callgrindBase + 1
	dumpStatsAt       = callgrindBase + 3
	startInstr        = callgrindBase + 4
	stopInstr         = callgrindBase + 5
)

// do makes request code with one argument; outside Valgrind it returns 0.
func do(code, arg uintptr) uintptr {
	args := [6]uintptr{code, arg}
	return request(&args, 0)
}

// Running reports whether the program runs under Valgrind.
func Running() bool { return do(runningOnValgrind, 0) != 0 }

// ZeroStats zeroes callgrind's counters (CALLGRIND_ZERO_STATS).
func ZeroStats() { do(zeroStats, 0) }

// DumpStatsAt writes callgrind's counters since the last zero or dump to a
// file of their own, described by reason (CALLGRIND_DUMP_STATS_AT), and
// zeroes them. reason must end in a NUL byte.
func DumpStatsAt(reason []byte) { do(dumpStatsAt, uintptr(unsafe.Pointer(unsafe.SliceData(reason)))) }

// StartInstrumentation makes callgrind instrument the code it runs from
// here on (CALLGRIND_START_INSTRUMENTATION); with --instr-atstart=no the
// program runs uninstrumented, several times faster, until it is called.
func StartInstrumentation() { do(startInstr, 0) }

// StopInstrumentation ends instrumentation (CALLGRIND_STOP_INSTRUMENTATION).
func StopInstrumentation() { do(stopInstr, 0) }

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
