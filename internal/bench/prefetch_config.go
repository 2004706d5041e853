package bench

import "flag"

// PrefetchConfig is the prefetch workloads' part of the run configuration.
type PrefetchConfig struct{}

func (c *PrefetchConfig) defaults()                           {}
func (c *PrefetchConfig) bind(fs *flag.FlagSet)               {}
func (c *PrefetchConfig) validate() []error                   { return nil }
func (c *PrefetchConfig) echo(e *Env, line func(string, any)) {}

// init derives what the workloads need once per run, after validation.
func (c *PrefetchConfig) init(e *Env) error { return nil }
