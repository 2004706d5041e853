// Package stores lists the stores a suite test binary has benchmarks of,
// for the lab's tools that run it engine by engine (audit, memfloor).
package stores

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
)

// InBinary lists the stores the suite's test binary bin has a benchmark
// Benchmark<family><Engine> of, in the binary's order: the stores it was
// built with (RocksDB only with its build tag), the reference rails left
// out, as they are no store.
func InBinary(bin, family string) ([]string, error) {
	prefix := "Benchmark" + family
	out, err := exec.Command(bin, "-test.list", "^"+prefix).Output()
	if err != nil {
		return nil, fmt.Errorf("%s -test.list: %w", bin, err)
	}
	var stores []string
	for _, name := range strings.Fields(string(out)) {
		if e, ok := strings.CutPrefix(name, prefix); ok && e != "" && !engname.Rail(e) {
			stores = append(stores, e)
		}
	}
	if len(stores) == 0 {
		return nil, fmt.Errorf("%s lists no %s<Engine>", bin, prefix)
	}
	return stores, nil
}
