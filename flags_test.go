package kvbench

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/core"
)

// cfg is the run's configuration: every flag of the suite binds to one of
// its fields here, and TestMain hands it, validated, to the benchmarks.
// No benchmark body reads a flag.
var cfg = core.Default()

func init() {
	cfg.Bind(flag.CommandLine)
	flag.CommandLine.Usage = usage
}

// usage follows a bad flag's one-line error (which the flag package prints
// first) with a pointer to the flag table instead of the listing of every
// flag of the test binary; -help still gets the listing.
func usage() {
	for _, a := range os.Args[1:] {
		if a == "-h" || a == "-help" || a == "--help" || a == "-test.h" {
			fmt.Fprintf(flag.CommandLine.Output(), "Flags of %s (docs/flags.md explains them):\n", filepath.Base(os.Args[0]))
			flag.PrintDefaults()
			return
		}
	}
	fmt.Fprintln(flag.CommandLine.Output(), "Every flag and what it accepts: docs/flags.md, or -help.")
}

func TestBadFlagsFailBeforeAnyWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	ro := filepath.Join(dir, "read-only")
	os.Mkdir(ro, 0o555)
	bench := "-test.bench=BenchmarkPopulateBolt"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-valsz", "0"}, "-valsz 0: must be from 1"},
		{[]string{"-keys_mil", "-1"}, "-keys_mil -1: must be more than 0"},
		{[]string{"-keys_mil", "0.0000001"}, "-keys_mil 1e-07: must be more than 0 (at least one key)"},
		{[]string{"-hit_rate", "0.5,2"}, "-hit_rate 2: must be from 0 to 1"},
		{[]string{"-cache", "hot"}, "-cache hot: must be warm or cold"},
		{[]string{"-scan_len", "0"}, "-scan_len 0: must be from 1"},
		{[]string{"-cold_ops", "-1"}, "-cold_ops -1: must be from 0"},
		{[]string{"-value_ratio", "0"}, "-value_ratio 0: must be more than 0"},
		{[]string{"-compression", "lz4"}, "-compression lz4: must be one of none, snappy, zstd"},
		{[]string{"-verify", "some"}, "-verify some: must be one of cheap, full"},
		{[]string{"-cache_mb", "0"}, "-cache_mb 0: must be from 1"},
		{[]string{"-batch", "0"}, "-batch 0: must be from 1"},
		{[]string{"-bolt_freelist", "tree"}, "-bolt_freelist tree: must be one of map, array"},
		{[]string{"-lmdb_write", "fast"}, "-lmdb_write fast: must be one of update, txn"},
		{[]string{"-badger_vthreshold", "0"}, "-badger_vthreshold 0: must be from 1"},
		{[]string{"-block_size", "512"}, "-block_size 512B: must be from 1KiB to 1MiB"},
		{[]string{"-pebble_index_block", "100"}, "-pebble_index_block 100: must be a size from 1KiB to 1GiB"},
		{[]string{"-bolt_freelist_sync=maybe"}, "-bolt_freelist_sync"},
		{[]string{"-prefetch_traces", "9001"}, "-prefetch_traces 9001: must be from 1 to 9000"},
		{[]string{"-commit_writers", "1,0x"}, "-commit_writers 0x: must be a count from 1 to 1024, or Nx for N times the CPUs"},
		{[]string{"-dir", file}, "is not a directory"},
		{[]string{"-dir", filepath.Join(dir, "missing")}, "does not exist"},
		{[]string{"-keys_mil", "10000", "-valsz", "65536"}, "the run needs about"},
		{[]string{"-mem_limit", "8MiB"}, "-mem_limit 8MiB: is below the floor of 16MiB"},
		{[]string{"-mem_limit", "64MiB", "-memtable_mb", "16"}, "-mem_limit 64MiB: the engines' own memory does not fit: block cache 1 MiB + 3 memtables in flight x 16 MiB"},
		{[]string{"-mem_limit", "20MiB"}, "-mem_limit 20MiB: the engines' own memory does not fit: block cache 1 MiB + 3 memtables in flight x 1 MiB + 16 MiB heap allowance = 20 MiB"},
	}
	if os.Geteuid() != 0 { // root may write anywhere
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"-dir", ro}, "is not writable"})
	}
	before := treeState(t, dir)
	for _, c := range cases {
		args := c.args
		if !slices.Contains(args, "-dir") {
			args = append(args, "-dir", dir)
		}
		out, code := runSelf(t, append([]string{bench}, args...)...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, output %q; want an error containing %q", c.args, code, out, c.want)
		}
		if strings.Contains(out, "Benchmark") && strings.Contains(out, "ns/op") {
			t.Errorf("%v: a benchmark ran: %s", c.args, out)
		}
	}
	if after := treeState(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("bad flags changed -dir:\nbefore %v\nafter  %v", before, after)
	}
	// Flag parsing errors from the flag package itself name the flag too,
	// and point to the flag table instead of listing every flag.
	for _, args := range [][]string{{"-threads", "0"}, {"-mem_limit", "64MB"}, {"-block_size", "32KB"}} {
		if out, code := runSelf(t, append([]string{bench, "-dir", dir}, args...)...); code == 0 || !strings.Contains(out, args[0]) ||
			!strings.Contains(out, "docs/flags.md") || strings.Count(out, "\n") > 3 {
			t.Errorf("%v: exit %d %q", args, code, out)
		}
	}
}

func TestForeignOwnedNameIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary")
	}
	dir := t.TempDir()
	theirs := filepath.Join(dir, "kvbench")
	os.Mkdir(theirs, 0o755)
	os.WriteFile(filepath.Join(theirs, "notes.txt"), []byte("someone else's"), 0o644)
	before := treeState(t, dir)
	out, code := runSelf(t, "-test.bench=BenchmarkReadRandomBolt", "-keys_mil", "0.001", "-dir", dir)
	if code == 0 || !strings.Contains(out, "not created by kvbench") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if after := treeState(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("a directory the suite did not create was touched")
	}
}
