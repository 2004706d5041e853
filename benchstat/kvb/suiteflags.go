package main

import (
	"flag"
	"io"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/flagreg"
	// The workload packages register their own flags from init; the
	// suite's flags are the core's, the engines' and theirs.
	_ "github.com/kvbench/kvbench/internal/workload"
	_ "github.com/kvbench/kvbench/internal/workload/embedded"
)

// forward is a flag kvb does not read but hands to both test binaries,
// as -name=value, in the order given (the binary keeps the last value,
// so a user's flag overrides a default given before it).
type forward struct {
	as     string // the name the test binary knows it by
	isBool bool
	to     *[]string
}

func (f forward) String() string   { return "" }
func (f forward) IsBoolFlag() bool { return f.isBool }
func (f forward) Set(v string) error {
	*f.to = append(*f.to, "-"+f.as+"="+v)
	return nil
}

// goTestFlags are go test's flags a comparison passes on, by their usual
// names (go test -cpu is the binary's -test.cpu); -bench, -count and
// -benchtime are compare's own.
var goTestFlags = []struct {
	name   string
	isBool bool
}{{"cpu", false}, {"timeout", false}, {"benchmem", true}, {"short", true}, {"v", true}}

// defineSuiteFlags adds every flag of the suite's test binary to fs as a
// flag forwarded into to: they come from the suite's own registry
// (core.Flags), so a new flag needs no change here. A suite flag with the
// name of one of fs's own is a bug, caught by the tests.
func defineSuiteFlags(fs *flag.FlagSet, to *[]string) {
	for _, o := range core.Flags() {
		define(fs, o.FlagName(), forward{as: o.FlagName(), isBool: flagreg.IsBool(o), to: to}, o.FlagUsage())
	}
	for _, g := range goTestFlags {
		define(fs, g.name, forward{as: "test." + g.name, isBool: g.isBool, to: to}, "go test's -"+g.name+", to both binaries")
	}
}

// printOwnFlags writes the flags of fs that a command reads itself, not
// those it forwards to the test binaries.
func printOwnFlags(w io.Writer, fs *flag.FlagSet) {
	own := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	own.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if _, fwd := f.Value.(forward); !fwd {
			own.Var(f.Value, f.Name, f.Usage)
			own.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	own.PrintDefaults()
}

func define(fs *flag.FlagSet, name string, v flag.Value, usage string) {
	if fs.Lookup(name) != nil {
		panic("kvb: flag -" + name + " is both the suite's and " + fs.Name() + "'s own")
	}
	fs.Var(v, name, usage)
}
