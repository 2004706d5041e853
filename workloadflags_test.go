package kvbench

import (
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
)

// TestFlagsThatShapeFixturesNameThem: every flag of the suite declared
// Shapes (a shared setting, an engine's option or a workload's flag)
// changes the names of the fixtures the run plans when it has another
// value, and every other flag leaves them as they are, so a fixture is
// reused exactly when it holds what the run asks for.
func TestFlagsThatShapeFixturesNameThem(t *testing.T) {
	// Another valid value for the flags whose next value is not one more
	// (or, for a bool, the other), and the flags left out, with why.
	other := map[string]string{"rate": "20000", "bloom_fpr": "0.02", "hit_rate": "0.5", "latency_dir": t.TempDir()}
	other["overwrite_passes"], other["commit_writers"] = "2", "2"
	other["keys_mil"], other["value_ratio"], other["cache"], other["mem_limit"], other["block_size"], other["threads"] = "0.2", "0.5", "warm", "1GiB", "8KiB", "2"
	other["badger_vthreshold"], other["badger_compactors"], other["pebble_index_block"], other["pebble_compactions"] = "512", "3", "128KiB", "2"
	other["dist"], other["zipf_theta"], other["zipf_items"], other["ycsb"], other["mix"] = "zipf,latest", "0.8", "1000", "A,C", "read=50,delete=50"
	leftOut := map[string]string{"embed_readahead": "false would advise this test binary's own pages; it changes how pages are read, not what a fixture holds",
		"dir": "it says where fixtures are, not what they hold"}
	names := func(c core.Config) string {
		e, err := core.NewEnv(c, io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.NewPlan(".")
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, f := range p.Fixtures {
			n = append(n, f.Params.Name())
		}
		slices.Sort(n)
		return strings.Join(n, " ")
	}
	base := core.Default()
	want := names(base)
	if !strings.Contains(want, "trace-") || !strings.Contains(want, "cdb-") {
		t.Fatalf("the plan of every benchmark lacks the workloads' own fixtures: %s", want)
	}
	for _, o := range core.Flags() {
		name := o.FlagName()
		if _, ok := leftOut[name]; ok {
			continue
		}
		c := base
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.Bind(fs)
		v, ok := other[name]
		for _, ch := range o.ChoiceTexts() { // another of its choices
			if !ok && ch != fs.Lookup(name).DefValue {
				v, ok = ch, true
			}
		}
		if !ok {
			if v, ok = next(fs.Lookup(name).Value.String()); !ok {
				t.Errorf("-%s: give it another valid value in this test", name)
				continue
			}
		}
		if err := fs.Set(name, v); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("-%s %s: %v; give it another valid value in this test", name, v, err)
			continue
		}
		if changed := names(c) != want; changed != o.Shaping() {
			t.Errorf("-%s %s: the fixtures' names changed %v, but the flag declares Shapes %v", name, v, changed, o.Shaping())
		}
	}
}

// next is a value next to v: one more, a millisecond more, the other bool.
func next(v string) (string, bool) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return strconv.FormatInt(n+1, 10), true
	}
	if d, err := time.ParseDuration(v); err == nil {
		return (d + time.Millisecond).String(), true
	}
	if b, err := strconv.ParseBool(v); err == nil {
		return strconv.FormatBool(!b), true
	}
	return "", false
}
