// Command engines prints one results file with engines side by side: it
// renames per-engine benchmarks (ReadRandomBadger/valsz=1024) to an engine
// key (ReadRandom/engine=Badger/valsz=1024) with benchfmt, then asks
// benchstat for a table with one column per engine.
//
//	go run ./benchstat/engines results.txt [benchstat flags]
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"golang.org/x/perf/benchfmt"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: engines results.txt [benchstat flags]")
		os.Exit(2)
	}
	in, err := os.Open(os.Args[1])
	if err != nil {
		fatal(err)
	}
	defer in.Close()
	tmp, err := os.MkdirTemp("", "kvbench-engines")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	outPath := filepath.Join(tmp, filepath.Base(os.Args[1]))
	out, err := os.Create(outPath)
	if err != nil {
		fatal(err)
	}
	n, err := Rewrite(in, os.Args[1], out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fatal(err)
	}
	if n == 0 {
		fatal(fmt.Errorf("%s: no per-engine benchmark results", os.Args[1]))
	}
	// Engines differ in their settings lines, so tables are split by unit
	// only (-table=), not by configuration, and free space on -dir changes
	// from run to run; later flags override these.
	args := append([]string{"tool", "benchstat", "-col", "/engine", "-table=", "-ignore", "dir-fs"}, os.Args[2:]...)
	cmd := exec.Command("go", append(args, outPath)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "engines:", err)
	os.Exit(1)
}

// Rewrite copies results from r to w with engine names moved into an
// engine= key, and returns how many results it renamed.
func Rewrite(r io.Reader, name string, w io.Writer) (int, error) {
	rd := benchfmt.NewReader(r, name)
	wr := benchfmt.NewWriter(w)
	renamed := 0
	for rd.Scan() {
		rec := rd.Result()
		if res, ok := rec.(*benchfmt.Result); ok {
			if nn, ok := engname.EngineName(res.Name); ok {
				res.Name = nn
				renamed++
			}
		}
		if err := wr.Write(rec); err != nil {
			return renamed, err
		}
	}
	return renamed, rd.Err()
}
