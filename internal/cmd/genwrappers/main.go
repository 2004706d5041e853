// Command genwrappers writes the root package's benchmark wrappers (see
// bench.Wrappers): go generate runs it from bench_test.go.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/kvbench/kvbench/internal/bench"
)

func main() {
	out := flag.String("o", "benchmarks_gen_test.go", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, bench.Wrappers(), 0o644); err != nil {
		log.Fatal(err)
	}
}
