package bench

import "flag"

// EmbedConfig is the embed workloads' part of the run configuration.
type EmbedConfig struct{}

func (c *EmbedConfig) defaults()                           {}
func (c *EmbedConfig) bind(fs *flag.FlagSet)               {}
func (c *EmbedConfig) validate() []error                   { return nil }
func (c *EmbedConfig) echo(e *Env, line func(string, any)) {}

// init derives what the workloads need once per run, after validation.
func (c *EmbedConfig) init(e *Env) error { return nil }
