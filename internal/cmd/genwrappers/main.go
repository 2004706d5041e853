// Command genwrappers writes the root package's benchmark wrappers (see
// core.Wrappers): go generate runs it from bench_test.go. With -pattern
// STEP it prints the -bench pattern of that step of make bench instead;
// with -engines_of MODULE, the engines built on that Go module.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/families"
	// The packages of workloads: each registers its own.
	_ "github.com/kvbench/kvbench/internal/workload"
	_ "github.com/kvbench/kvbench/internal/workload/embedded"
)

func main() {
	out := flag.String("o", "benchmarks_gen_test.go", "file to write")
	step := flag.String("pattern", "", "print the -bench pattern of this step of make bench (write, read) and exit")
	list := flag.String("list", "", "print the benchmarks of this step or workload (populate, readrandom), one a line, and exit")
	blocks := flag.Bool("data_blocks", false, "with -list: only the benchmarks of engines with data blocks (the LSMs, which -block_size applies to)")
	enginesOf := flag.String("engines_of", "", "print the engines (as titled in benchmark names) whose binding is this Go module, one a line, and exit")
	flag.Parse()
	if *enginesOf != "" {
		titles, modules := engine.ModuleEngines(*enginesOf)
		if len(titles) == 0 {
			fmt.Fprintf(os.Stderr, "genwrappers: no engine of this suite is built on %s; the engines' modules: %s\n", *enginesOf, strings.Join(modules, ", "))
			os.Exit(2)
		}
		fmt.Println(strings.Join(titles, "\n"))
		return
	}
	if *step != "" {
		fmt.Println(families.Pattern(*step))
		return
	}
	if *list != "" {
		for _, t := range families.StepTargets(*list) {
			if !*blocks || t.Info.DataBlocks {
				fmt.Println(t.Name())
			}
		}
		return
	}
	if err := os.WriteFile(*out, core.Wrappers(), 0o644); err != nil {
		log.Fatal(err)
	}
}
