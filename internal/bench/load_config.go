package bench

import "flag"

// LoadConfig is the load workloads' part of the run configuration.
type LoadConfig struct{}

func (c *LoadConfig) defaults()                           {}
func (c *LoadConfig) bind(fs *flag.FlagSet)               {}
func (c *LoadConfig) validate() []error                   { return nil }
func (c *LoadConfig) echo(e *Env, line func(string, any)) {}

// init derives what the workloads need once per run, after validation.
func (c *LoadConfig) init(e *Env) error { return nil }
