// Command genwrappers writes the root package's benchmark wrappers (see
// core.Wrappers): go generate runs it from bench_test.go.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/kvbench/kvbench/internal/core"
	// The packages of workloads: each registers its own.
	_ "github.com/kvbench/kvbench/internal/workload"
	_ "github.com/kvbench/kvbench/internal/workload/embedded"
)

func main() {
	out := flag.String("o", "benchmarks_gen_test.go", "file to write")
	flag.Parse()
	if err := os.WriteFile(*out, core.Wrappers(), 0o644); err != nil {
		log.Fatal(err)
	}
}
