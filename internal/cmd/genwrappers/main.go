// Command genwrappers writes the root package's benchmark wrappers (see
// bench.Wrappers): go generate runs it from bench_test.go. With -pattern
// STEP it prints the -bench pattern of that step of make bench instead.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/kvbench/kvbench/internal/bench"
)

func main() {
	out := flag.String("o", "benchmarks_gen_test.go", "file to write")
	step := flag.String("pattern", "", "print the -bench pattern of this step of make bench (write, read) and exit")
	list := flag.String("list", "", "print the benchmarks of this step or workload (populate, readrandom), one a line, and exit")
	flag.Parse()
	if *step != "" {
		fmt.Println(bench.Pattern(*step))
		return
	}
	if *list != "" {
		for _, n := range bench.StepTargets(*list) {
			fmt.Println(n)
		}
		return
	}
	if err := os.WriteFile(*out, bench.Wrappers(), 0o644); err != nil {
		log.Fatal(err)
	}
}
