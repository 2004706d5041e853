package main

import (
	"bytes"

	"golang.org/x/perf/benchfmt"
)

// Titles are the engine names as they end top-level benchmark names.
// Longer first, so no title is taken for a suffix of another.
var Titles = []string{"RocksDB", "Badger", "Pebble", "Memory", "Bolt", "Lmdb"}

// EngineName turns "ReadRandomBadger/valsz=1024-2" into
// "ReadRandom/engine=Badger/valsz=1024-2".
func EngineName(n benchfmt.Name) (benchfmt.Name, bool) {
	base := n.Base()
	for _, t := range Titles {
		if bytes.HasSuffix(base, []byte(t)) && len(base) > len(t) {
			op := base[:len(base)-len(t)]
			rest := n[len(base):]
			out := make([]byte, 0, len(n)+8)
			out = append(out, op...)
			out = append(out, "/engine="...)
			out = append(out, t...)
			out = append(out, rest...)
			return benchfmt.Name(out), true
		}
	}
	return n, false
}
