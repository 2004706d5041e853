package benchpattern

import (
	"reflect"
	"testing"
)

func TestSplitMatchesGoTest(t *testing.T) {
	for in, want := range map[string][][]string{
		"BenchmarkReadRandomBadger":           {{"BenchmarkReadRandomBadger"}},
		"ReadRandom/threads=1":                {{"ReadRandom", "threads=1"}},
		"ReadRandom/threads=1|PrefetchBadger": {{"ReadRandom", "threads=1"}, {"PrefetchBadger"}},
		"(Populate|ReadRandom)/valsz=[0-9]":   {{"(Populate|ReadRandom)", "valsz=[0-9]"}},
		"Read[/|]x/y":                         {{"Read[/|]x", "y"}},
		`A\/B|C`:                              {{`A\/B`}, {"C"}},
		".":                                   {{"."}},
		"BenchmarkReadRandom(Bolt|Lmdb)/valsz=256|BenchmarkScan/[a|b]/x": {
			{"BenchmarkReadRandom(Bolt|Lmdb)", "valsz=256"}, {"BenchmarkScan", "[a|b]", "x"}},
	} {
		if got := Split(in); !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}
