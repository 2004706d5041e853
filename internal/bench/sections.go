package bench

// initSections derives what the workload sections of the configuration
// need once per run (e.g. the trace data set), after validation.
func (e *Env) initSections() error {
	for _, init := range []func(*Env) error{e.Cfg.Prefetch.init, e.Cfg.Embed.init, e.Cfg.Load.init} {
		if err := init(e); err != nil {
			return err
		}
	}
	return nil
}
