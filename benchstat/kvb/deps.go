package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/sides"
)

var depsCommand = cli.New(cli.Spec[*bool]{
	Name:    "deps",
	Summary: "install what the suite needs from Debian (librocksdb-dev, valgrind, chromium)",
	Help:    printDepsHelp,
	Flags: func(fs *flag.FlagSet) *bool {
		return fs.Bool("quiet", false, "say nothing when a package cannot be installed")
	},
	Run: runDeps,
})

func init() { register(depsCommand) }

// dep is a Debian package the suite can use, and what a machine without
// it and without root does.
type dep struct {
	pkg       string // Debian's package
	installed func() bool
	why       string // said after how to install it
	missing   int    // the exit status when it cannot be installed
}

// deps are the packages by the names kvb deps takes.
var deps = map[string]dep{
	"rocksdb":  {"librocksdb-dev", rocksdbInstalled, "to include RocksDB. Continuing without it.", 0},
	"valgrind": {"valgrind", onPath("valgrind"), "for the tests that count instructions. Continuing without it.", 0},
	"chromium": {"chromium", onPath("chromium"), "for the report test.", 1},
}

func rocksdbInstalled() bool {
	return sides.HaveRocksDBHeader() || exec.Command("dpkg", "-s", "librocksdb-dev").Run() == nil
}

func onPath(name string) func() bool {
	return func() bool {
		_, err := exec.LookPath(name)
		return err == nil
	}
}

func printDepsHelp(w io.Writer) {
	fmt.Fprint(w, `usage: kvb deps [-quiet] [rocksdb] [valgrind] [chromium]

Installs each named Debian package unless it is there: as root directly,
otherwise through sudo when it needs no password. Failing both it says
how to install it and goes on: exit 0 for rocksdb (the suite runs without
RocksDB) and valgrind (the tests that count instructions skip), exit 1
for chromium (the report test needs it). Without names: rocksdb.

  -quiet   say nothing when a package cannot be installed (make test says
           once, itself, that RocksDB was skipped)
`)
}

func runDeps(c cli.Call, quiet *bool, names []string) int {
	if len(names) == 0 {
		names = []string{"rocksdb"}
	}
	var want []dep
	for _, n := range names {
		d, ok := deps[n]
		if !ok {
			return c.Usage("unknown dependency %q (rocksdb, valgrind, chromium)", n)
		}
		want = append(want, d)
	}
	code := 0
	for _, d := range want {
		code = max(code, install(d, *quiet, c.Stderr))
	}
	return code
}

// install installs d unless it is there; its result is the exit status:
// apt-get's when it fails, d.missing when there is no way to run it.
func install(d dep, quiet bool, stderr io.Writer) int {
	if d.installed() {
		return 0
	}
	var sudo []string
	switch {
	case os.Geteuid() == 0:
	case exec.Command("sudo", "-n", "true").Run() == nil:
		sudo = []string{"sudo"}
	default:
		if !quiet {
			fmt.Fprintf(stderr, "kvbench: %s is missing; install it with 'sudo apt-get install %s' %s\n", d.pkg, d.pkg, d.why)
		}
		return d.missing
	}
	fmt.Fprintf(stderr, "kvbench: installing %s\n", d.pkg)
	for _, apt := range [][]string{{"update", "-qq"}, {"install", "-y", "-qq", d.pkg}} {
		args := append(append(append([]string(nil), sudo...), "env", "DEBIAN_FRONTEND=noninteractive", "apt-get"), apt...)
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "kvbench: apt-get %s %s: %v\n", apt[0], d.pkg, err)
			return max(exitCode(err), 1)
		}
	}
	return 0
}
