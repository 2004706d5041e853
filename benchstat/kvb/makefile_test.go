package main

import (
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
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
	bench := cli.NewFlagSet("bench")
	benchFlags(bench)
	test := flag.NewFlagSet("test", flag.ContinueOnError)
	testFlags(test)
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

// recipes are the Makefile's targets and their commands, a command's
// continued lines joined (a rule that names several targets gives each
// the same recipe).
func recipes(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	rule := regexp.MustCompile(`^([a-z][a-z0-9 -]*):([^=]|$)`)
	var targets []string
	continued := false
	for _, l := range readMakefile(t) {
		switch m := rule.FindStringSubmatch(l); {
		case strings.HasPrefix(l, "\t"):
			for _, n := range targets {
				if cmds := out[n]; continued {
					cmds[len(cmds)-1] += " " + strings.TrimSpace(l)
				} else {
					out[n] = append(cmds, strings.TrimSpace(l))
				}
			}
			continued = strings.HasSuffix(l, "\\")
		case m != nil:
			targets = strings.Fields(m[1])
			for _, n := range targets {
				if _, ok := out[n]; !ok {
					out[n] = nil
				}
			}
		default:
			targets = nil
		}
	}
	return out
}

// TestTargetsDocumented: docs/targets.md has a row for every target that
// is not make test's step or job nor a dependency's install, and names
// exactly the targets that are more than one call of kvb ("Every target
// but ... is one call").
func TestTargetsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/targets.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	steps := map[string]bool{"all": true, "deps": true, "valgrind-deps": true, "report-deps": true}
	for _, s := range testSteps {
		steps[s.name] = true
	}
	for j := range (&testConfig{}).jobs() {
		steps[j] = true
	}
	m := regexp.MustCompile(`(?s)Every target but (.*?) is one\s+call`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal(`docs/targets.md: no sentence "Every target but ... is one call"`)
	}
	named := map[string]bool{}
	for _, n := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(m[1], -1) {
		named[n[1]] = true
	}
	for name, lines := range recipes(t) {
		if !steps[name] && !regexp.MustCompile("(?m)^\\| [^|]*`make "+regexp.QuoteMeta(name)+"[ `]").MatchString(doc) {
			t.Errorf("docs/targets.md has no row for make %s", name)
		}
		var calls []string
		for _, l := range lines {
			if l != "@echo" {
				calls = append(calls, l)
			}
		}
		switch one := len(calls) == 1 && strings.Contains(calls[0], "$(KVB)"); {
		case !one && len(calls) > 0 && !named[name]:
			t.Errorf("make %s runs %q, not one call of kvb, and docs/targets.md's \"Every target but\" does not name it", name, calls)
		case one && named[name]:
			t.Errorf("make %s is one call of kvb, and docs/targets.md's \"Every target but\" names it", name)
		}
	}
}
