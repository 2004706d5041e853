package core

import (
	"flag"
	"fmt"
	"maps"
	"strings"
	"time"
)

// A workload's own flags. An engine declares the options only it has as
// engine.Params; a workload declares its own as Flags in
// Workload.Options, and the core does the rest: the flag on the command
// line, its check before any work, its configuration lines, and a copy of
// its value in every Config. Config's fields are the settings every
// workload shares; nothing else is in the core.

// Flag is one option of a workload's own: a flag -<Name> of type T, read
// by the workload with Get. T is a type the flag package has a flag for
// (int, int64, uint, uint64, float64, bool, string, time.Duration) or one
// whose pointer is a flag.Value (RateList, FloatList).
type Flag[T any] struct {
	Name    string // the flag: "prefetch_traces"
	Default T
	Usage   string
	// Check, when set, validates the value v against the whole
	// configuration c before any work (Config.Validate); its error reads
	// after "-<name> <value>: ", e.g. "must be from 1 to 9000", unless it
	// is FlagErrors (joined), which name the items of a list themselves.
	Check func(v T, c *Config) error
	// Echo, when set, writes the flag's configuration lines in place of
	// the one line "<name with dashes>: <value>": several (values derived
	// from v, how the workload uses it), or none when another flag's
	// lines state it.
	Echo func(v T, e *Env, line func(key string, v any))
	// Shapes: the value changes the fixtures the workload declares (their
	// names say it), so fixtures built with another value are not reused.
	// The root package's TestWorkloadFlagsThatShapeFixturesNameThem holds
	// every flag to what it declares.
	Shapes bool
}

// Option is a workload's flag as Workload.Options lists it: a *Flag[T].
type Option interface {
	// FlagName is the flag's name, without the dash.
	FlagName() string
	// Shaping reports the flag's Shapes.
	Shaping() bool
	decl() optionDecl
}

// optionDecl is a Flag without its type, as the core handles it.
type optionDecl struct {
	usage string
	// value is a flag value holding v (a T), and a reader of its T.
	value func(v any) optionValue
	def   any
	check func(v any, c *Config) error
	echo  func(v any, e *Env, line func(key string, v any))
}

// optionValue is one Config's value of a workload flag.
type optionValue struct {
	flag.Value
	get func() any
}

func (f *Flag[T]) FlagName() string { return f.Name }
func (f *Flag[T]) Shaping() bool    { return f.Shapes }

func (f *Flag[T]) decl() optionDecl {
	d := optionDecl{usage: f.Usage, value: func(v any) optionValue { return newValue(v.(T)) }, def: f.Default}
	if f.Check != nil {
		d.check = func(v any, c *Config) error { return f.Check(v.(T), c) }
	}
	if f.Echo != nil {
		d.echo = func(v any, e *Env, line func(string, any)) { f.Echo(v.(T), e, line) }
	}
	return d
}

// Get is the flag's value in c: as parsed or Set, or its default.
func (f *Flag[T]) Get(c *Config) T {
	if v, ok := c.opts[f.Name]; ok {
		return v.get().(T)
	}
	return f.Default
}

// Set gives the flag the value v in c (a test's, or a tool's that runs
// the suite without its command line); Config copies made before keep
// theirs.
func (f *Flag[T]) Set(c *Config, v T) {
	c.setOption(f.Name, newValue(v))
}

// newValue is a flag value holding v: the flag package's own for its
// types, so that a workload's flag parses, fails and prints in -help as
// one the flag package defines would.
func newValue[T any](v T) optionValue {
	p := new(T)
	*p = v
	get := func() any { return *p }
	if fv, ok := any(p).(flag.Value); ok {
		return optionValue{fv, get}
	}
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	switch q := any(p).(type) {
	case *int:
		fs.IntVar(q, "v", *q, "")
	case *int64:
		fs.Int64Var(q, "v", *q, "")
	case *uint:
		fs.UintVar(q, "v", *q, "")
	case *uint64:
		fs.Uint64Var(q, "v", *q, "")
	case *float64:
		fs.Float64Var(q, "v", *q, "")
	case *bool:
		fs.BoolVar(q, "v", *q, "")
	case *string:
		fs.StringVar(q, "v", *q, "")
	case *time.Duration:
		fs.DurationVar(q, "v", *q, "")
	default:
		panic(fmt.Sprintf("core: a flag of type %T: use a type the flag package has, or one whose pointer is a flag.Value", v))
	}
	return optionValue{fs.Lookup("v").Value, get}
}

// options are the flags of every registered workload, each once, in the
// order they were first registered; optionByName finds them.
var (
	options      []Option
	optionByName = map[string]Option{}
)

// addOptions registers a workload's flags. Workloads that share a flag
// list the same *Flag; two flags of one name are a bug.
func addOptions(w *Workload) {
	for _, o := range w.Options {
		name := o.FlagName()
		if prev, ok := optionByName[name]; ok {
			if prev != o {
				panic("core: two workload flags named " + name + " (" + w.Name + "'s and another's)")
			}
			continue
		}
		optionByName[name] = o
		options = append(options, o)
	}
}

// Options lists every registered workload's flags, each once.
func Options() []Option { return append([]Option(nil), options...) }

// option is c's value of o, its default when c has none.
func (c *Config) option(o Option) optionValue {
	if v, ok := c.opts[o.FlagName()]; ok {
		return v
	}
	d := o.decl()
	return d.value(d.def)
}

// setOption replaces c's value of a flag, copying the map so that a copy
// of c made before keeps its own.
func (c *Config) setOption(name string, v optionValue) {
	m := maps.Clone(c.opts)
	if m == nil {
		m = map[string]optionValue{}
	}
	m[name] = v
	c.opts = m
}

// defaultOptions gives c every workload flag at its default.
func (c *Config) defaultOptions() {
	c.opts = map[string]optionValue{}
	for _, o := range options {
		d := o.decl()
		c.opts[o.FlagName()] = d.value(d.def)
	}
}

// bindOptions registers the workload flags on fs, bound to values of c's
// own: a copy of c made before keeps its values.
func (c *Config) bindOptions(fs *flag.FlagSet) {
	m := make(map[string]optionValue, len(options))
	for _, o := range options {
		d := o.decl()
		v := d.value(c.option(o).get())
		m[o.FlagName()] = v
		fs.Var(v.Value, o.FlagName(), d.usage)
	}
	c.opts = m
}

// validateOptions runs every workload flag's Check.
func (c *Config) validateOptions() []error {
	var errs []error
	for _, o := range options {
		d := o.decl()
		if d.check == nil {
			continue
		}
		v := c.option(o)
		err := d.check(v.get(), c)
		if err == nil {
			continue
		}
		var named []error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			named = j.Unwrap()
		} else {
			named = []error{err}
		}
		for _, n := range named {
			if _, ok := n.(flagError); !ok {
				n = FlagError(o.FlagName(), v.String(), n.Error())
			}
			errs = append(errs, n)
		}
	}
	return errs
}

// echoOptions writes the workload flags' configuration lines.
func (e *Env) echoOptions(line func(key string, v any)) {
	for _, o := range options {
		v := e.Cfg.option(o)
		if d := o.decl(); d.echo != nil {
			d.echo(v.get(), e, line)
			continue
		}
		line(strings.ReplaceAll(o.FlagName(), "_", "-"), v.String())
	}
}
