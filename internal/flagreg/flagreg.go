// Package flagreg is the one form every flag of the suite is declared in
// (docs/architecture.md, "flags → config"): the core's shared settings,
// each engine's options and each workload's. It imports nothing of the
// suite, so the engines, which the core imports, use it too.
package flagreg

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Flag is one flag of the suite, -<Name>, of type T: one the flag package
// has a flag for, or one whose pointer is a flag.Value (core.IntList,
// engine.Text), so it parses, fails and prints in -help as the flag
// package's own. C is what its check and its lines read of the run:
// *core.Config for the shared settings and a workload's flags; any for an
// engine's option, which reads only its own value.
type Flag[T, C any] struct {
	Name    string // without the dash: "prefetch_traces"
	Default T
	Usage   string
	// Choices, when set, are the only values accepted: any other fails
	// with "must be one of a, b, c".
	Choices []T
	// Check, when set, validates v against the whole configuration before
	// any work; its error follows "-<name> <value>: " unless it is a
	// core.FlagError already (a list's items, joined).
	Check func(v T, c C) error
	// Echo, when set, writes the flag's configuration lines in place of
	// "<name with dashes>: <value>": several, or none.
	Echo func(v T, c C, line func(key string, v any))
	// Shapes: the value changes the fixtures a run builds, so fixtures
	// built with another value are not reused.
	Shapes bool
	// Field, when set, is where c holds the value (a field of
	// core.Config); nil: c holds it by name (Store).
	Field func(c C) *T
}

// Option is a Flag without its type: how the core, the engines and the
// tooling handle every flag alike.
type Option interface {
	FlagName() string
	FlagUsage() string
	Shaping() bool
	// ChoiceTexts are the Choices as the command line writes them.
	ChoiceTexts() []string
	// NewValue is a value holding v, a T; nil holds the default.
	NewValue(v any) Value
	// ValueIn is c's value: its Field (field true), by name (Store), or
	// the default.
	ValueIn(c any) (v Value, field bool)
	// SetDefault gives the flag its default in c.
	SetDefault(c any)
	// CheckValue checks v (a T) against Choices and Check, with c (a C,
	// or nil).
	CheckValue(v, c any) error
	// EchoValue writes v's configuration lines.
	EchoValue(v Value, c any, line func(key string, v any))
}

// Value is one configuration's value of a flag: the flag.Value that parses
// and prints it, and a reader of the T it holds.
type Value struct {
	flag.Value
	Get func() any
}

// Store holds the values of flags without a Field, by name (core.Config).
type Store interface {
	FlagValue(name string) (Value, bool)
	SetFlagValue(name string, v Value)
}

func (f *Flag[T, C]) FlagName() string  { return f.Name }
func (f *Flag[T, C]) FlagUsage() string { return f.Usage }
func (f *Flag[T, C]) Shaping() bool     { return f.Shapes }

func (f *Flag[T, C]) ChoiceTexts() []string {
	var out []string
	for _, ch := range f.Choices {
		out = append(out, f.NewValue(ch).String())
	}
	return out
}

func (f *Flag[T, C]) NewValue(v any) Value {
	p := new(T)
	*p = f.Default
	if v != nil {
		*p = v.(T)
	}
	return Value{valueAt(p), func() any { return *p }}
}

func (f *Flag[T, C]) ValueIn(c any) (Value, bool) {
	if f.Field != nil {
		p := f.Field(c.(C))
		return Value{valueAt(p), func() any { return *p }}, true
	}
	if s, ok := c.(Store); ok {
		if v, ok := s.FlagValue(f.Name); ok {
			return v, false
		}
	}
	return f.NewValue(nil), false
}

func (f *Flag[T, C]) SetDefault(c any) { f.Set(c.(C), f.Default) }

func (f *Flag[T, C]) CheckValue(v, c any) error {
	t := v.(T)
	if f.Choices != nil && !slices.ContainsFunc(f.Choices, func(x T) bool { return reflect.DeepEqual(x, t) }) {
		return errors.New("must be one of " + strings.Join(f.ChoiceTexts(), ", "))
	}
	if f.Check == nil {
		return nil
	}
	cc, _ := c.(C) // the zero C when there is none
	return f.Check(t, cc)
}

func (f *Flag[T, C]) EchoValue(v Value, c any, line func(key string, v any)) {
	if f.Echo != nil {
		cc, _ := c.(C)
		f.Echo(v.Get().(T), cc, line)
		return
	}
	line(strings.ReplaceAll(f.Name, "_", "-"), v.String())
}

// Get is the flag's value in c: as parsed or Set, or its default.
func (f *Flag[T, C]) Get(c C) T {
	v, _ := f.ValueIn(c)
	return v.Get().(T)
}

// Set gives the flag the value v in c, which holds it (a Field or a Store):
// for a test, or a program that runs the suite without its command line.
func (f *Flag[T, C]) Set(c C, v T) {
	if f.Field != nil {
		*f.Field(c) = v
		return
	}
	any(c).(Store).SetFlagValue(f.Name, f.NewValue(v))
}

// Parse is o's value of the text s, as the command line gives it.
func Parse(o Option, s string) (Value, error) {
	v := o.NewValue(nil)
	return v, v.Set(s)
}

// Text is o's default as the command line writes it.
func Text(o Option) string { return o.NewValue(nil).String() }

// IsBool reports whether o is a switch: -name alone sets it.
func IsBool(o Option) bool {
	b, ok := o.NewValue(nil).Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// valueAt is a flag value stored at p: the flag package's own for its
// types, so the flag prints in -help as one it defines would.
func valueAt[T any](p *T) flag.Value {
	if fv, ok := any(p).(flag.Value); ok {
		return fv
	}
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	if !(define(fs, p, (*flag.FlagSet).IntVar) || define(fs, p, (*flag.FlagSet).Int64Var) ||
		define(fs, p, (*flag.FlagSet).UintVar) || define(fs, p, (*flag.FlagSet).Uint64Var) ||
		define(fs, p, (*flag.FlagSet).Float64Var) || define(fs, p, (*flag.FlagSet).BoolVar) ||
		define(fs, p, (*flag.FlagSet).StringVar) || define(fs, p, (*flag.FlagSet).DurationVar)) {
		panic(fmt.Sprintf("flagreg: a flag of type %T: use a type the flag package has, or one whose pointer is a flag.Value", *p))
	}
	return fs.Lookup("v").Value
}

// define defines flag "v" on fs at p with def when p is a *V.
func define[T, V any](fs *flag.FlagSet, p *T, def func(*flag.FlagSet, *V, string, V, string)) bool {
	q, ok := any(p).(*V)
	if ok {
		def(fs, q, "v", *q, "")
	}
	return ok
}
