// Command embedchild is BenchmarkEmbedColdStart's minimal child
// (child=minimal, seed 004), holding nothing but the embedded cdb: it
// reads and checks one record and prints the test-binary child's line.
// embedded.cdb is committed empty; the benchmark builds it with an
// -overlay that puts the suite's cdb in its place:
//
//	{"Replace": {"<this directory>/embedded.cdb": "<the cdb>"}}
//	go build -overlay overlay.json -o embedchild ./internal/cmd/embedchild
//	./embedchild -record 7 -start $(date +%s%N)
package main

import (
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/alldroll/cdb"

	"github.com/kvbench/kvbench/internal/measure"
	"github.com/kvbench/kvbench/internal/records"
)

// embedded is the cdb in the executable's read-only data, paged in from
// the file as a read touches it (as the test binary's embed.FS).
//
//go:embed embedded.cdb
var embedded string

func main() {
	record := flag.Uint64("record", 0, "record to read (key k_<record>)")
	start := flag.Int64("start", 0, "wall clock in Unix ns just before the parent started this process; 0 is now")
	readahead := flag.Bool("readahead", true, "leave OS readahead on for the cdb's pages (false: madvise MADV_RANDOM first)")
	none := flag.Bool("none", false, "read nothing: the cost of the process alone")
	settle := flag.Duration("settle", 0, "sleep this long before the window")
	flag.Parse()
	if *start == 0 {
		*start = time.Now().UnixNano()
	}
	time.Sleep(*settle)
	// Read and verify the record (unless -none) and print the figures
	// EmbedColdChild prints.
	io0, _ := measure.ReadIO()
	t0 := time.Now()
	var err error
	if !*none {
		err = read(*record, *readahead)
	}
	if err == nil {
		err = measure.WriteColdChild(os.Stdout, *start, t0, time.Now(), io0)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "embedchild: %v\n", err)
		os.Exit(1)
	}
}

// read opens the embedded cdb and reads and verifies record i.
func read(i uint64, readahead bool) error {
	if embedded == "" {
		return errors.New("the embedded cdb is empty: build with an -overlay that replaces embedded.cdb (see the package comment)")
	}
	if !readahead { // -embed_readahead=false
		if err := measure.AdviseRandom(embedded); err != nil {
			return err
		}
	}
	r, err := cdb.New().GetReader(strings.NewReader(embedded))
	if err != nil {
		return err
	}
	var kb [records.MaxKeySize]byte
	key := records.Key(kb[:0], i)
	v, err := r.Get(key)
	if err != nil {
		return fmt.Errorf("get %s: %w", key, err)
	}
	return records.Check(i, v)
}
