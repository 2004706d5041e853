package coretest

import (
	"slices"
	"sync"
	"testing"
)

// KeyLog records the keys a benchmark body reads, a list per call.
type KeyLog struct {
	mu    sync.Mutex
	calls [][]string
}

// Mark starts the list of the next call.
func (l *KeyLog) Mark() {
	l.mu.Lock()
	l.calls = append(l.calls, nil)
	l.mu.Unlock()
}

// Add records a key the call read.
func (l *KeyLog) Add(k []byte) {
	l.mu.Lock()
	n := len(l.calls) - 1
	l.calls[n] = append(l.calls[n], string(k))
	l.mu.Unlock()
}

// Calls is the keys of each call, in order.
func (l *KeyLog) Calls() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls
}

// CheckCalls holds a body that draws random keys to core.CallStreams's
// rule. run(seed) runs four calls at that -seed (testing.Benchmark twice:
// b.N = 1, then N) and returns each one's keys. Two calls of the same b.N
// must read different keys, a run with the same -seed the same, one with
// another -seed others.
func CheckCalls(t *testing.T, name string, run func(seed uint64) [][]string) {
	t.Helper()
	a, again, other := run(7), run(7), run(8)
	if len(a) != 4 {
		t.Fatalf("%s: %d calls logged, want 4", name, len(a))
	}
	for i := range a {
		if len(a[i]) == 0 {
			t.Fatalf("%s: call %d read nothing", name, i+1)
		}
	}
	// Fixed-rate bodies run windows of time: compare what both reached.
	same := func(x, y []string) bool {
		n := min(len(x), len(y))
		return slices.Equal(x[:n], y[:n])
	}
	if same(a[1], a[3]) {
		t.Errorf("%s: calls 2 and 4 (the same b.N) read the same keys, from %q", name, a[1][0])
	}
	if a[0][0] == a[1][0] && a[1][0] == a[2][0] {
		t.Errorf("%s: calls 1 to 3 all began with key %q", name, a[0][0])
	}
	for i := range a {
		if !same(a[i], again[i]) {
			t.Errorf("%s: call %d: the same -seed read other keys the second time", name, i+1)
		}
	}
	if same(a[1], other[1]) {
		t.Errorf("%s: -seed 7 and 8 read the same keys in call 2", name)
	}
}
