package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

func init() {
	register(command{
		name:    "build",
		summary: "build the suite's test binary, the one every make target with results runs",
		help:    printBuildHelp,
		run:     runBuild,
	})
}

func buildFlags(fs *flag.FlagSet) (tags, out *string) {
	tags = fs.String("tags", defaultTags(), "build tags (TAGS): rocksdb when its headers are installed, unless $TAGS is set")
	out = fs.String("o", filepath.Join("results", "kvbench.test"), "the binary to write; its directory is made")
	return
}

func printBuildHelp(w io.Writer) {
	fmt.Fprint(w, "usage: kvb build [-tags TAGS] [-o BIN]\n\nBuilds the root package's test binary (go test -c).\n\n")
	fs := flag.NewFlagSet("kvb build", flag.ContinueOnError)
	fs.SetOutput(w)
	buildFlags(fs)
	fs.PrintDefaults()
}

func runBuild(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet("build")
	tags, out := buildFlags(fs)
	rest, status, ok := cli.Parse(fs, args, printBuildHelp, stdout, stderr)
	if !ok {
		return status
	}
	if len(rest) > 0 {
		return cli.Usage(stderr, "build", printBuildHelp, "unexpected argument %q", rest[0])
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		fmt.Fprintln(stderr, "kvb build:", err)
		return 1
	}
	r := &runner{stdout: stdout, stderr: stderr}
	if err := r.run(context.Background(), []task{buildStep(*tags, *out)}); err != nil {
		fmt.Fprintln(stderr, "kvb build:", err)
		return statusOf(err)
	}
	return 0
}
