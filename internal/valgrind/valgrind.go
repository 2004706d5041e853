// Package valgrind makes Valgrind client requests from Go without cgo:
// the magic instruction sequence Valgrind recognises (valgrind.h's
// VALGRIND_DO_CLIENT_REQUEST on amd64), written in assembly. Outside
// Valgrind the sequence is four rotations that leave a register as it was
// and an exchange of a register with itself: 1.2–1.4 ns a request here
// (BenchmarkZeroStats), and every request returns its default.
package valgrind

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
