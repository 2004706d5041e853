package main

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

func TestEngineName(t *testing.T) {
	for in, want := range map[string]string{
		"ReadRandomBadger/valsz=1024/threads=8-2": "ReadRandom/engine=Badger/valsz=1024/threads=8-2",
		"PopulateRocksDB-2":                       "Populate/engine=RocksDB-2",
		"ReadRandomLmdb":                          "ReadRandom/engine=Lmdb",
	} {
		got, ok := EngineName(benchfmt.Name(in))
		if !ok || string(got) != want {
			t.Errorf("%s -> %s, %v; want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"LmdbBatch/mode=txn-2", "Badger", "Disk/threads=1"} {
		if got, ok := EngineName(benchfmt.Name(in)); ok {
			t.Errorf("%s renamed to %s", in, got)
		}
	}
}

func TestRewriteLinesEnginesUp(t *testing.T) {
	in := `goos: linux
keys: 100
BenchmarkReadRandomBadger/threads=1-2   	 100	 2000 ns/op	 63.0 hit%
BenchmarkReadRandomBolt/threads=1-2     	 100	 1000 ns/op	 63.0 hit%
BenchmarkLmdbBatch/mode=txn-2           	   1	 5000 ns/op
`
	var out bytes.Buffer
	n, err := Rewrite(strings.NewReader(in), "x", &out)
	if err != nil || n != 2 {
		t.Fatalf("renamed %d, %v", n, err)
	}
	s := out.String()
	for _, want := range []string{"BenchmarkReadRandom/engine=Badger/threads=1-2", "BenchmarkReadRandom/engine=Bolt/threads=1-2", "BenchmarkLmdbBatch/mode=txn-2", "keys: 100"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
