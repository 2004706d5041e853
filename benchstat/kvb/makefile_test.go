package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

func readMakefile(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(raw), "\n")
}

// TestMakefileTargetsAreAliases: every recipe of the Makefile is at most
// three lines and runs no shell loop; the steps are kvb's.
func TestMakefileTargetsAreAliases(t *testing.T) {
	lines := readMakefile(t)
	loop := regexp.MustCompile(`\b(for|while|until)\b.*;\s*do\b`)
	target, n := "", 0
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "\t") && target != "":
			n++
			if n == 4 {
				t.Errorf("make %s: a recipe longer than 3 lines", target)
			}
			if loop.MatchString(l) {
				t.Errorf("make %s: a shell loop: %s", target, l)
			}
		case strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#"):
			target = ""
		case regexp.MustCompile(`^[a-z][a-z0-9 -]*:([^=]|$)`).MatchString(l):
			target, n = strings.SplitN(l, ":", 2)[0], 0
		default:
			target = ""
		}
	}
}

// TestMakefileDefaultsAreKvbs: the Makefile's variables and kvb's flags
// they become have the same defaults, so make bench and go run
// ./benchstat/kvb bench run the same.
func TestMakefileDefaultsAreKvbs(t *testing.T) {
	t.Setenv("TAGS", "")
	def := regexp.MustCompile(`^([A-Z_]+)\s*\?=\s*(.*)$`)
	vars := map[string]string{}
	for _, l := range readMakefile(t) {
		if m := def.FindStringSubmatch(l); m != nil {
			vars[m[1]] = strings.TrimSpace(m[2])
		}
	}
	bench := benchFlags(&benchConfig{})
	test := flag.NewFlagSet("test", flag.ContinueOnError)
	testFlags(&testConfig{}, new(bool), test)
	for v, f := range map[string]*flag.Flag{
		"RESULTS": bench.Lookup("results"), "KEYS_MIL": bench.Lookup("keys_mil"), "VALSZ": bench.Lookup("valsz"),
		"COUNT": bench.Lookup("count"), "FULL_COUNT": bench.Lookup("count"), "SIM_COUNT": bench.Lookup("count"),
		"BENCHTIME": bench.Lookup("benchtime"), "BLOCKS": bench.Lookup("blocks"), "YCSB_BENCHTIME": bench.Lookup("ycsb_benchtime"),
		"YCSB_BLOCK": bench.Lookup("ycsb_block"), "OVERWRITE_PASS": bench.Lookup("overwrite_passes"),
		"OVERWRITE_MEMTABLE": bench.Lookup("overwrite_memtable"), "OPEN_BENCHTIME": bench.Lookup("open_benchtime"),
		"MEM_COUNT": bench.Lookup("mem_count"), "MEM_LIMIT": bench.Lookup("mem_limit"), "MEM_BENCHTIME": bench.Lookup("mem_benchtime"),
		"MEM_TIMEOUT": bench.Lookup("mem_timeout"), "MEM_WORKLOADS": bench.Lookup("mem_workloads"), "MEM_DIST": bench.Lookup("mem_dist"),
		"MEM_BLOCKS": bench.Lookup("mem_blocks"), "SIM_BENCHTIME": bench.Lookup("sim_benchtime"), "PREFETCH_TRACES": bench.Lookup("prefetch_traces"),
		"STATICCHECK": test.Lookup("staticcheck"), "ACTIONLINT": test.Lookup("actionlint"),
	} {
		got, ok := vars[v]
		if !ok {
			t.Errorf("the Makefile has no %s ?= default", v)
			continue
		}
		if got != f.DefValue {
			t.Errorf("%s ?= %s in the Makefile, -%s defaults to %s", v, got, f.Name, f.DefValue)
		}
	}
}
