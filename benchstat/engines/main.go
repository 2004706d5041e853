// Command engines prints one results file with engines side by side.
// By default it answers the questions make bench asks, one short table per
// question (package benchstat/internal/summary), and with -o writes the
// same text to a file. With -benchstat it renames per-engine benchmarks
// (ReadRandomBadger/valsz=1024) to an engine key
// (ReadRandom/engine=Badger/valsz=1024) with benchfmt and hands the file to
// benchstat for one column per engine, every unit.
//
//	go run ./benchstat/engines [-o summary.txt] results.txt
//	go run ./benchstat/engines -benchstat results.txt [benchstat flags]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kvbench/kvbench/benchstat/internal/engname"
	"github.com/kvbench/kvbench/benchstat/internal/summary"
	"golang.org/x/perf/benchfmt"
)

func main() {
	out := flag.String("o", "", "also write the summary, exactly as printed, to this file")
	full := flag.Bool("benchstat", false, "print benchstat's tables of every unit, engines as columns, instead of the summary")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: engines [-o summary.txt] results.txt\n       engines -benchstat results.txt [benchstat flags]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *full {
		benchstat(flag.Arg(0), flag.Args()[1:])
		return
	}
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	in, err := os.Open(flag.Arg(0))
	if err != nil {
		fatal(err)
	}
	r, err := summary.Read(in, flag.Arg(0))
	in.Close()
	if err != nil {
		fatal(err)
	}
	var text bytes.Buffer
	if err := summary.Build(r).Write(&text); err != nil {
		fatal(err)
	}
	if _, err := os.Stdout.Write(text.Bytes()); err != nil {
		fatal(err)
	}
	if *out != "" {
		if err := os.WriteFile(*out, text.Bytes(), 0o644); err != nil {
			fatal(err)
		}
	}
}

// benchstat runs benchstat on file with engines as columns.
func benchstat(file string, flags []string) {
	in, err := os.Open(file)
	if err != nil {
		fatal(err)
	}
	defer in.Close()
	tmp, err := os.MkdirTemp("", "kvbench-engines")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	outPath := filepath.Join(tmp, filepath.Base(file))
	out, err := os.Create(outPath)
	if err != nil {
		fatal(err)
	}
	n, err := Rewrite(in, file, out)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fatal(err)
	}
	if n == 0 {
		fatal(fmt.Errorf("%s: no per-engine benchmark results", file))
	}
	// Engines differ in their settings lines, so tables are split by unit
	// only (-table=), not by configuration, and free space on -dir changes
	// from run to run; later flags override these.
	args := append([]string{"tool", "benchstat", "-col", "/engine", "-table=", "-ignore", "dir-fs"}, flags...)
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
