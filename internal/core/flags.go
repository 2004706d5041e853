package core

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/flagreg"
)

// The suite's flags: docs/architecture.md, "flags → config".

// Flag is a flag the core or a workload declares: its check and its lines
// read the run's Config. A workload reads its value with Get.
type Flag[T any] = flagreg.Flag[T, *Config]

// Option is any flag of the suite, whatever its type: what
// Workload.Options and engine.Info.Params list.
type Option = flagreg.Option

// Flags lists every flag of the suite once, in the order Config binds,
// checks and echoes them and the tooling forwards them: the shared
// settings, the registered engines' options (engines by name), then the
// registered workloads' own, in registration order. Two flags of one name
// are a bug, which binding them panics on.
func Flags() []Option {
	return slices.Concat(sharedFlags, engineFlags(), options)
}

// engineFlags lists every engine's options once: engines that share an
// adapter (or an option) share its flag.
func engineFlags() []Option {
	var out []Option
	for _, info := range engine.All() {
		for _, p := range info.Params {
			if !slices.ContainsFunc(out, func(o Option) bool { return o.FlagName() == p.FlagName() }) {
				out = append(out, p)
			}
		}
	}
	return out
}

// options are the registered workloads' flags, each once, in the order
// they were first registered (Register).
var options []Option

// FlagValue is c's value of a flag held by name (flagreg.Store).
func (c *Config) FlagValue(name string) (flagreg.Value, bool) {
	v, ok := c.opts[name]
	return v, ok
}

// SetFlagValue replaces c's value of a flag held by name in a copy of the
// map, so a copy of c made before keeps its own.
func (c *Config) SetFlagValue(name string, v flagreg.Value) {
	m := map[string]flagreg.Value{}
	maps.Copy(m, c.opts)
	m[name] = v
	c.opts = m
}

// SetFlag gives the flag name the value the command line would, in c.
func (c *Config) SetFlag(name, value string) error {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	c.Bind(fs)
	if fs.Lookup(name) == nil {
		return fmt.Errorf("-%s is no flag of the suite", name)
	}
	return fs.Set(name, value)
}

// value is c's value of o: its field, what c holds by name, or its
// default.
func (c *Config) value(o Option) flagreg.Value {
	v, _ := o.ValueIn(c)
	return v
}

// Bind registers every flag of the suite on fs, bound to c: a shared
// setting to its field, any other to a value of c's own (a copy of c made
// before keeps its values). Their current values are the defaults.
func (c *Config) Bind(fs *flag.FlagSet) {
	m := map[string]flagreg.Value{}
	for _, o := range Flags() {
		v, field := o.ValueIn(c)
		if !field {
			v = o.NewValue(v.Get())
			m[o.FlagName()] = v
		}
		fs.Var(v.Value, o.FlagName(), o.FlagUsage())
	}
	c.opts = m
}

// FlagError is the error of a flag's bad value, naming the flag, the value
// and what it accepts ("-valsz 0: must be from 1 ..."). A Flag's Check
// may return several, joined, to name the bad items of a list.
func FlagError(name string, val any, want string) error {
	return flagError{fmt.Sprintf("-%s %v: %s", name, val, want)}
}

type flagError struct{ msg string }

func (e flagError) Error() string { return e.msg }

// Validate runs every flag's check without touching the disk, each error
// naming its flag, in the order of their text.
func (c *Config) Validate() error {
	var errs []error
	for _, o := range Flags() {
		v := c.value(o)
		err := o.CheckValue(v.Get(), c)
		named := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			named = j.Unwrap()
		}
		for _, n := range named {
			if n == nil {
				continue
			}
			if !errors.As(n, new(flagError)) {
				n = FlagError(o.FlagName(), v.String(), n.Error())
			}
			errs = append(errs, n)
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return errors.Join(errs...)
}

// echoFlags writes the configuration lines of flags.
func (c *Config) echoFlags(flags []Option, line func(key string, v any)) {
	for _, o := range flags {
		o.EchoValue(c.value(o), c, line)
	}
}
