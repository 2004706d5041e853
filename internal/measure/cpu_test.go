package measure

import (
	"testing"
	"time"
)

func TestCPUTimeCountsWorkNotWaiting(t *testing.T) {
	c0 := CPUTime()
	time.Sleep(100 * time.Millisecond)
	if slept := CPUTime() - c0; slept > 20*time.Millisecond {
		t.Errorf("100 ms asleep used %v of CPU", slept)
	}
	c0 = CPUTime()
	x := 0
	for t0 := time.Now(); CPUTime()-c0 < 20*time.Millisecond; x++ {
		if time.Since(t0) > 10*time.Second {
			t.Fatalf("10 s of spinning (%d rounds) used %v of CPU", x, CPUTime()-c0)
		}
	}
}
