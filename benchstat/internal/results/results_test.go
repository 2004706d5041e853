package results

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
)

const sample = `goos: linux
keys: 100
gate: ops/s
BenchmarkReadRandomBadger/valsz=1024/threads=1-2   	 100	 2000 ns/op	 500000 ops/s
this line is not a result
BenchmarkReadRandomBolt/valsz=1024/threads=1-2     	 100	 1000 ns/op	 1000000 ops/s
keys: 200
BenchmarkDisk/op=randread-4k/threads=1-2 	 10	 150000 ns/op
BenchmarkReadRandomBolt/valsz=1024/threads=1-2     	 100	 1100 ns/op	 900000 ops/s
BenchmarkReadRandomBolt/valsz=1024/threads=1-2 x
Unit ops/s better=higher
`

func TestRead(t *testing.T) {
	f, err := Read(strings.NewReader(sample), "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 4 || len(f.Skipped) != 1 || !strings.HasPrefix(f.Skipped[0].Error(), "x:10: ") {
		t.Fatalf("%d results, skipped %v", len(f.Results), f.Skipped)
	}
	r := f.Results[0]
	want := Result{Name: "ReadRandomBadger/valsz=1024/threads=1-2", Op: "ReadRandom", Engine: "Badger", Config: "valsz=1024/threads=1", Iters: 100,
		Values: []Value{{"ns/op", 2000}, {"ops/s", 500000}}, // as written: not benchfmt's sec/op
		Labels: []Label{{"goos", "linux"}, {"keys", "100"}, {"gate", "ops/s"}}, Line: 4}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got  %+v\nwant %+v", r, want)
	}
	if v, ok := r.Value("ns/op"); !ok || v != 2000 {
		t.Fatalf("ns/op: %v %v", v, ok)
	}
	if _, ok := r.Value("sec/op"); ok {
		t.Fatal("a value in a unit the file did not write")
	}
	if d := f.Results[2]; d.Op != "Disk" || d.Engine != "" || d.Config != "op=randread-4k/threads=1" || d.Label("keys") != "200" || d.Label("gate") != "ops/s" {
		t.Fatalf("Disk: %+v", d)
	}
	if f.Units.GetBetter("ops/s") != 1 {
		t.Fatal("the Unit line is lost")
	}
}

func TestSeries(t *testing.T) {
	f, err := Read(strings.NewReader(sample), "x")
	if err != nil {
		t.Fatal(err)
	}
	s := f.Series(nil)
	bolt := Key{Op: "ReadRandom", Engine: "Bolt", Config: "valsz=1024/threads=1", Unit: "ns/op"}
	if v := s.Values[bolt]; !slices.Equal(v, []float64{1000, 1100}) {
		t.Fatalf("%s: %v", bolt, v)
	}
	if bolt.String() != "BenchmarkReadRandomBolt/valsz=1024/threads=1 ns/op" {
		t.Fatal(bolt.String())
	}
	if !slices.Equal(s.Ops, []string{"ReadRandom", "Disk"}) || !slices.Equal(s.Configs["Disk"], []string{"op=randread-4k/threads=1"}) {
		t.Fatalf("ops %v, configs %v", s.Ops, s.Configs)
	}
	s = f.Series(func(r *Result) bool { return r.Engine != "" })
	if slices.Contains(s.Ops, "Disk") || len(s.Values) != 4 {
		t.Fatalf("engines only: %v %v", s.Ops, s.Values)
	}
}

func TestSplit(t *testing.T) {
	for name, want := range map[string][3]string{
		"ReadRandomRocksDB/valsz=1024/hit=63%/threads=16-2": {"ReadRandom", "RocksDB", "valsz=1024/hit=63%/threads=16"},
		"PopulateBolt-2":            {"Populate", "Bolt", ""},
		"Disk/op=randread-4k":       {"Disk", "", "op=randread-4k"},
		"LmdbBatch/mode=txn/sync-4": {"LmdbBatch", "", "mode=txn/sync"},
	} {
		if op, eng, cfg := Split(name); [3]string{op, eng, cfg} != want {
			t.Errorf("%s: %q %q %q, want %q", name, op, eng, cfg, want)
		}
	}
	for _, title := range engname.Titles() {
		name := "ReadRandom" + title + "/valsz=1024/threads=4-2"
		if op, eng, cfg := Split(name); op != "ReadRandom" || eng != title || cfg != "valsz=1024/threads=4" {
			t.Errorf("%s: %q %q %q", name, op, eng, cfg)
		}
	}
}

func TestSplitConfig(t *testing.T) {
	ps := SplitConfig("valsz=1024/mem=26MiB/sync")
	if !reflect.DeepEqual(ps, Parts{{"valsz", "1024"}, {"mem", "26MiB"}, {"sync", ""}}) {
		t.Fatalf("%+v", ps)
	}
	if v, ok := ps.Get("mem"); !ok || v != "26MiB" {
		t.Fatalf("mem: %q %v", v, ok)
	}
	if _, ok := ps.Get("threads"); ok {
		t.Fatal("threads found")
	}
	if SplitConfig("") != nil {
		t.Fatal("parts of no configuration")
	}
	if got := ps.String(); got != "valsz=1024/mem=26MiB/sync" {
		t.Fatalf("String: %q", got)
	}
	if got := ps.Without("mem").Join(" "); got != "valsz=1024 sync" {
		t.Fatalf("Without mem: %q", got)
	}
}

func TestMatch(t *testing.T) {
	ps := SplitConfig("valsz=1024/mem=26MiB/cache=warm")
	for _, c := range []struct {
		filters []string
		want    bool
	}{
		{nil, true},
		{[]string{"cache=warm", "mem"}, true},
		{[]string{"cache=cold"}, false},
		{[]string{"threads"}, false},
		{[]string{"!mem"}, false},
		{[]string{"!threads", "valsz=1024"}, true},
	} {
		if got := ps.Match(c.filters); got != c.want {
			t.Errorf("Match(%q) = %v", c.filters, got)
		}
	}
	for f, want := range map[string]string{"mem": "mem+", "mem=26MiB": "mem+", "!mem": "mem-"} {
		k, present := FilterKey(f)
		if got := k + map[bool]string{true: "+", false: "-"}[present]; got != want {
			t.Errorf("FilterKey(%q) = %q", f, got)
		}
	}
}

func TestWithEngineKey(t *testing.T) {
	in := `goos: linux
keys: 100
BenchmarkReadRandomBadger/threads=1-2   	 100	 2000 ns/op	 63.0 hit%
BenchmarkReadRandomBolt/threads=1-2     	 100	 1000 ns/op	 63.0 hit%
BenchmarkLmdbBatch/mode=txn-2           	   1	 5000 ns/op
`
	var out bytes.Buffer
	n, err := WithEngineKey(strings.NewReader(in), "x", &out)
	if err != nil || n != 2 {
		t.Fatalf("renamed %d, %v", n, err)
	}
	s := out.String()
	for _, want := range []string{"BenchmarkReadRandom/engine=Badger/threads=1-2", "BenchmarkReadRandom/engine=Bolt/threads=1-2", "BenchmarkLmdbBatch/mode=txn-2", "keys: 100"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}
