package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/internal/records"
)

var embedDataCommand = cli.New(cli.Spec[*embedDataOptions]{
	Name:    "embed-data",
	Summary: "write the cdb of N records the next test binary embeds (seed 004), and the overlay that leaves the committed one out",
	Usage:   embedDataUsage,
	Flags:   embedDataFlags,
	Run:     runEmbedData,
})

func init() { register(embedDataCommand) }

// embedGenerated is the cdb the test binary embeds beside (or, through
// embedOverlay, instead of) testdata/embed-committed.cdb.
const embedGenerated = "testdata/embed-generated.cdb"

const embedDataUsage = `usage: kvb embed-data -records N [-out FILE]

Writes the cdb of records k_0 .. k_<N-1> in write order (seed 004:
-records 20000000 is the seed's 1.9 GB) that the next build of the test
binary embeds instead of testdata/embed-committed.cdb, and
` + embedOverlay + `, which leaves the committed cdb out of a build that
passes it (-overlay): the glob embeds both otherwise, and at 20M records
the 9.4 MB more passes the Go linker's 2e9-byte limit. The file appears
under its name only when complete; a record count whose cdb would pass
the format's 4 GiB limit is refused before anything is written.

`

type embedDataOptions struct {
	n   uint64
	out string
}

func embedDataFlags(fs *flag.FlagSet) *embedDataOptions {
	o := &embedDataOptions{}
	fs.Uint64Var(&o.n, "records", 0, "number of records (at least 1)")
	fs.StringVar(&o.out, "out", embedGenerated, "cdb file to write")
	return o
}

func runEmbedData(c cli.Call, o *embedDataOptions, rest []string) int {
	if len(rest) > 0 || o.n == 0 {
		return c.Usage("say how many records, e.g. kvb embed-data -records 20000000 (make embed-data RECORDS=20000000)")
	}
	if err := records.CheckCDB(o.n); err != nil {
		return c.Usage("-records %d: %v", o.n, err)
	}
	err := writeCDB(o.n, o.out, c.Stdout, c.Stderr)
	committed, aerr := filepath.Abs("testdata/embed-committed.cdb")
	if err = cmp.Or(err, aerr); err == nil {
		overlay, _ := json.Marshal(map[string]map[string]string{"Replace": {committed: ""}})
		err = os.WriteFile(embedOverlay, append(overlay, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb embed-data:", err)
		return 1
	}
	fmt.Fprintf(c.Stderr, "kvb embed-data: build with -overlay %s to leave the committed cdb out (needed past ~19.9M records)\n", embedOverlay)
	return 0
}

// writeCDB writes the cdb of n records to out through a temporary file
// beside it, renamed when complete and of the size the format says.
func writeCDB(n uint64, out string, stdout, stderr io.Writer) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	defer tmp.Close()           // a no-op once closed
	start := time.Now()
	last := start
	sb := records.NewSeekBuffer(tmp, 1<<20)
	err = records.Build(sb, n, func(done uint64) {
		if now := time.Now(); now.Sub(last) > 5*time.Second || done == n {
			last = now
			fmt.Fprintf(stderr, "kvb embed-data: %d of %d records, %.0fs\n", done, n, now.Sub(start).Seconds())
		}
	})
	for _, step := range []func() error{sb.Flush, func() error { return tmp.Chmod(0o644) }, tmp.Sync, tmp.Close} {
		if err == nil {
			err = step()
		}
	}
	if err != nil {
		return err
	}
	if fi, err := os.Stat(tmp.Name()); err != nil {
		return err
	} else if fi.Size() != records.CDBSize(n) {
		return fmt.Errorf("wrote %d bytes, want %d", fi.Size(), records.CDBSize(n))
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Fprintf(stdout, "%s: %d records, %d bytes, written in %.1fs (%.0f records/s)\n", out, n, records.CDBSize(n), el.Seconds(), float64(n)/el.Seconds())
	return nil
}
