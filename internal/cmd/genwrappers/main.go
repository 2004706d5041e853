// Command genwrappers writes the root package's benchmark wrappers (see
// core.Wrappers): go generate runs it from bench_test.go. With
// -engines_of MODULE it prints the engines built on that Go module
// instead.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	// The packages of workloads: each registers its own.
	_ "github.com/kvbench/kvbench/internal/workload"
	_ "github.com/kvbench/kvbench/internal/workload/embedded"
)

func main() {
	out := flag.String("o", "benchmarks_gen_test.go", "file to write")
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
	if err := os.WriteFile(*out, core.Wrappers(), 0o644); err != nil {
		log.Fatal(err)
	}
}
