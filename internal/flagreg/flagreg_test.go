package flagreg

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// run is a configuration as the core's is to its flags: fields for some,
// a Store for the rest.
type run struct {
	Keys   int
	values map[string]Value
}

func (r *run) FlagValue(name string) (Value, bool) { v, ok := r.values[name]; return v, ok }
func (r *run) SetFlagValue(name string, v Value) {
	if r.values == nil {
		r.values = map[string]Value{}
	}
	r.values[name] = v
}

var (
	keys = &Flag[int, *run]{Name: "keys", Default: 10, Field: func(r *run) *int { return &r.Keys },
		Check: func(n int, _ *run) error {
			if n < 1 {
				return errors.New("must be at least 1")
			}
			return nil
		}}
	stride = &Flag[int, *run]{Name: "stride", Default: 1,
		Check: func(n int, r *run) error {
			if n > r.Keys {
				return errors.New("must be at most -keys")
			}
			return nil
		},
		Echo: func(n int, _ *run, line func(string, any)) { line("stride-keys", n) }}
	mode = &Flag[string, any]{Name: "some_mode", Default: "a", Choices: []string{"a", "b"}}
	wait = &Flag[time.Duration, *run]{Name: "wait_time", Default: time.Second}
)

// TestOneFormForEveryFlag: a flag held in a field and one held by name
// read, set, check and echo alike; Choices refuse anything else.
func TestOneFormForEveryFlag(t *testing.T) {
	var r run
	for _, o := range []Option{keys, stride, wait} {
		o.SetDefault(&r)
	}
	if keys.Get(&r) != 10 || r.Keys != 10 || stride.Get(&r) != 1 || wait.Get(&r) != time.Second {
		t.Fatalf("defaults: keys %d (field %d), stride %d, wait %v", keys.Get(&r), r.Keys, stride.Get(&r), wait.Get(&r))
	}
	fv, ok := keys.ValueIn(&r)
	if !ok || fv.Set("5") != nil || r.Keys != 5 {
		t.Fatalf("the field's value: %v, keys %d", ok, r.Keys)
	}
	stride.Set(&r, 7)
	if err := stride.CheckValue(stride.Get(&r), &r); err == nil || err.Error() != "must be at most -keys" {
		t.Errorf("stride 7 of 5 keys: %v", err)
	}
	var lines []string
	stride.EchoValue(stride.NewValue(3), &r, func(k string, v any) { lines = append(lines, k) })
	wait.EchoValue(wait.NewValue(nil), &r, func(k string, v any) { lines = append(lines, k) })
	if strings.Join(lines, " ") != "stride-keys wait-time" {
		t.Errorf("lines %v", lines)
	}
	if err := mode.CheckValue("c", nil); err == nil || err.Error() != "must be one of a, b" {
		t.Errorf("some_mode c: %v", err)
	}
	if v, err := Parse(mode, "b"); err != nil || mode.CheckValue(v.Get(), nil) != nil {
		t.Errorf("some_mode b: %v", err)
	}
	if Text(wait) != "1s" || IsBool(wait) || !IsBool(&Flag[bool, any]{Name: "on"}) {
		t.Errorf("wait_time's text %q, switches %v", Text(wait), IsBool(wait))
	}
}
