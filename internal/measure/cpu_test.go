package measure

import (
	"runtime"
	"testing"
	"time"
)

// TestCPUTimeCountsWorkNotWaiting: spinning makes CPUTime grow, sleeping
// does not.
func TestCPUTimeCountsWorkNotWaiting(t *testing.T) {
	// Waiting: an order-of-magnitude check. A process asleep for 200 ms
	// uses microseconds of CPU however loaded the machine is; a CPUTime
	// that counted wall time would report the 200 ms, ten times the bound.
	runtime.GC() // no collection of earlier garbage during the sleep
	c0 := CPUTime()
	time.Sleep(200 * time.Millisecond)
	if slept := CPUTime() - c0; slept > 20*time.Millisecond {
		t.Errorf("200 ms asleep used %v of CPU", slept)
	}
	// Work: the loop's own calls are the clock, not the wall, so a busy
	// machine only makes it take longer. Each getrusage call costs well
	// over 10 ns of CPU, so 10 million of them are far beyond 20 ms.
	c0 = CPUTime()
	for i := 0; CPUTime()-c0 < 20*time.Millisecond; i++ {
		if i == 10_000_000 {
			t.Fatalf("%d calls of CPUTime used %v of CPU", i, CPUTime()-c0)
		}
	}
}
