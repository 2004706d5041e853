package dataset

import (
	"bytes"
	"fmt"
	"sort"
	"testing"
)

func TestTraceKeysMatchTheSeed(t *testing.T) {
	tr, err := NewTraces(MaxTraces, 32, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Keys() != 810_000 {
		t.Fatalf("full size has %d keys, want 810000", tr.Keys())
	}
	var kb [TraceKeySize]byte
	for _, c := range []struct{ tr, s int }{{0, 0}, {1, 1}, {MaxTraces - 1, SpansPerTrace - 1}, {4321, 17}} {
		want := fmt.Sprintf("%d:%d", TraceFirst+TraceStep*c.tr, SpanFirst+SpanStep*c.s)
		if got := string(tr.Key(kb[:], c.tr, c.s)); got != want {
			t.Errorf("Key(%d,%d) = %q, want %q", c.tr, c.s, got, want)
		}
	}
	if got := string(tr.Key(kb[:], MaxTraces-1, SpansPerTrace-1)); got != "99990:9900" {
		t.Errorf("last key %q", got)
	}
}

func TestTraceKeysSortedAndMissPrefixesBetweenTraces(t *testing.T) {
	tr, err := NewTraces(300, 16, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var kb [TraceKeySize]byte
	for i := 0; i < tr.N; i++ {
		for s := 0; s < SpansPerTrace; s++ {
			keys = append(keys, string(tr.Key(kb[:], i, s)))
		}
	}
	if !sort.StringsAreSorted(keys) {
		t.Fatal("keys are not written in sorted order")
	}
	var pb [TracePrefixSize]byte
	for i := 0; i < tr.N; i++ {
		hit := tr.Prefix(pb[:], i, true)
		n := 0
		for _, k := range keys {
			if bytes.HasPrefix([]byte(k), hit) {
				n++
			}
		}
		if n != SpansPerTrace {
			t.Fatalf("hit prefix %q matches %d keys", hit, n)
		}
		miss := string(tr.Prefix(pb[:], i, false))
		j := sort.SearchStrings(keys, miss)
		for _, k := range keys {
			if k[:TracePrefixSize] == miss {
				t.Fatalf("miss prefix %q matches key %q", miss, k)
			}
		}
		// The first key at or after a miss prefix is the next trace's first.
		if i+1 < tr.N {
			if want := string(tr.Key(kb[:], i+1, 0)); j >= len(keys) || keys[j] != want {
				t.Fatalf("seek %q lands on index %d, want %q", miss, j, want)
			}
		} else if j != len(keys) {
			t.Fatalf("miss after the last trace lands on %q", keys[j])
		}
	}
}

func TestTraceValuesVerify(t *testing.T) {
	tr, err := NewTraces(3, 2500, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Gen.NewChecker(true)
	v := tr.Gen.Value(nil, tr.Index(2, 89))
	if err := c.Check(tr.Index(2, 89), v); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(tr.Index(2, 88), v); err == nil {
		t.Fatal("a neighbour's value passed the check")
	}
	if tr.LogicalBytes() != 3*90*(10+2500) {
		t.Fatalf("LogicalBytes = %d", tr.LogicalBytes())
	}
	for _, n := range []int{0, -1, MaxTraces + 1} {
		if _, err := NewTraces(n, 10, 1, 1); err == nil {
			t.Errorf("NewTraces(%d) accepted", n)
		}
	}
}
