package core

import (
	"reflect"
	"slices"
	"testing"
)

// TestBenchIsWhatABodyNeeds: a workload's body sees the run's values, the
// three interfaces and the streams of its calls, not the run's lifecycle
// (planning, setup, the budget, the configuration echo). A method added to
// what bodies see is added here on purpose.
func TestBenchIsWhatABodyNeeds(t *testing.T) {
	var got []string
	bt := reflect.TypeOf(&Bench{})
	for i := range bt.NumMethod() {
		got = append(got, bt.Method(i).Name)
	}
	want := []string{"CallStreams", "ClearSettings", "Evict", "FixtureDir", "GuardSpace", "KV", "KVFor", "Logf",
		"NewFixture", "Open", "Options", "RunsSub", "ScratchDir", "ScratchSettings", "Selects", "Shape",
		"ShowFixtureSettings", "ShowSettings", "StreamsOfCall", "Budget", "WarnOnce", "WatchLeaf", "WriteAll", "WriteAllTimed"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("a body sees %v, want %v", got, want)
	}
	env := reflect.TypeOf(&Env{})
	if n := env.NumMethod(); n <= len(want) {
		t.Errorf("Env has %d methods, no more than a body sees", n)
	}
	for _, it := range []reflect.Type{reflect.TypeFor[Fixtures](), reflect.TypeFor[Writers](), reflect.TypeFor[Output]()} {
		if it.NumMethod() > 8 {
			t.Errorf("%s has %d methods: split it by what its callers need", it.Name(), it.NumMethod())
		}
	}
}
