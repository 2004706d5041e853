package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

func init() {
	register(cli.New(cli.Spec[*buildOptions]{
		Name:    "build",
		Summary: "build the suite's test binary, the one every make target with results runs",
		Usage:   "usage: kvb build [-tags TAGS] [-o BIN]\n\nBuilds the root package's test binary (go test -c).\n\n",
		Flags:   buildFlags,
		Run:     runBuild,
	}))
}

// buildOptions are kvb build's flags.
type buildOptions struct {
	tags, out string
}

func buildFlags(fs *flag.FlagSet) *buildOptions {
	o := &buildOptions{}
	fs.StringVar(&o.tags, "tags", defaultTags(), "build tags (TAGS): rocksdb when its headers are installed, unless $TAGS is set")
	fs.StringVar(&o.out, "o", filepath.Join("results", "kvbench.test"), "the binary to write; its directory is made")
	return o
}

func runBuild(c cli.Call, o *buildOptions, rest []string) int {
	if len(rest) > 0 {
		return c.Usage("unexpected argument %q", rest[0])
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		fmt.Fprintln(c.Stderr, "kvb build:", err)
		return 1
	}
	r := &runner{stdout: c.Stdout, stderr: c.Stderr}
	if err := r.run(context.Background(), []task{buildStep(o.tags, o.out)}); err != nil {
		fmt.Fprintln(c.Stderr, "kvb build:", err)
		return statusOf(err)
	}
	return 0
}
