package main

import (
	"bytes"
	"strings"
	"testing"
)

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
