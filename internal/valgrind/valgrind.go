// Package valgrind makes Valgrind client requests from Go without cgo:
// valgrind.h's VALGRIND_DO_CLIENT_REQUEST sequence for amd64 in assembly.
// Outside Valgrind it is a few no-op instructions, 1.2–1.4 ns a request
// (BenchmarkZeroStats), and every request returns its default.
package valgrind

import (
	"strconv"
	"strings"
	"unsafe"
)

// request runs client request args[0] with arguments args[1:]: Valgrind's
// answer, or def outside it.
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

// DumpStatsAt writes callgrind's counters since the last zero or dump as a
// dump described by reason, NUL-terminated, and zeroes them.
func DumpStatsAt(reason []byte) { do(dumpStatsAt, uintptr(unsafe.Pointer(unsafe.SliceData(reason)))) }

// StartInstrumentation makes callgrind instrument the code from here on
// (with --instr-atstart=no, a program runs faster until then).
func StartInstrumentation() { do(startInstr, 0) }

// StopInstrumentation ends instrumentation (CALLGRIND_STOP_INSTRUMENTATION).
func StopInstrumentation() { do(stopInstr, 0) }

// windowPrefix starts a timed window's dump: "kvbench <leaf> n=<b.N>".
const windowPrefix = "kvbench "

// WindowReason is DumpStatsAt's description of leaf's window over n.
func WindowReason(leaf string, n int) []byte {
	return append([]byte(windowPrefix+leaf+" n="), strconv.Itoa(n)+"\x00"...)
}

// ParseWindow reads back WindowReason's description (without its NUL).
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
