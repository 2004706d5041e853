// Command embed-data writes the cdb that kvbench embeds in its test binary:
// records k_0 .. k_<n-1> in write order.
//
//	go run ./internal/records/cmd/embed-data -records 20000000 -out testdata/embed-generated.cdb
//
// The file appears under its name only when complete. A record count whose
// cdb would pass the format's 4 GiB limit is refused before anything is
// written.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kvbench/kvbench/internal/records"
)

func main() {
	n := flag.Uint64("records", 0, "number of records (at least 1)")
	out := flag.String("out", "", "cdb file to write")
	flag.Parse()
	if err := run(*n, *out); err != nil {
		fmt.Fprintf(os.Stderr, "embed-data: %v\n", err)
		os.Exit(2)
	}
}

func run(n uint64, out string) error {
	if err := records.CheckCDB(n); err != nil {
		return fmt.Errorf("-records %d: %w", n, err)
	}
	if out == "" {
		return fmt.Errorf("-out: name the cdb file to write")
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	start := time.Now()
	last := start
	sb := records.NewSeekBuffer(tmp, 1<<20)
	err = records.Build(sb, n, func(done uint64) {
		if now := time.Now(); now.Sub(last) > 5*time.Second || done == n {
			last = now
			fmt.Fprintf(os.Stderr, "embed-data: %d of %d records, %.0fs\n", done, n, now.Sub(start).Seconds())
		}
	})
	if err == nil {
		err = sb.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fi, err := os.Stat(tmp.Name())
	if err != nil {
		return err
	}
	if fi.Size() != records.CDBSize(n) {
		return fmt.Errorf("wrote %d bytes, want %d", fi.Size(), records.CDBSize(n))
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	el := time.Since(start)
	fmt.Printf("%s: %d records, %d bytes, written in %.1fs (%.0f records/s)\n", out, n, records.CDBSize(n), el.Seconds(), float64(n)/el.Seconds())
	return nil
}
