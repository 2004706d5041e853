package core

import "github.com/kvbench/kvbench/internal/engine"

// Variant is one combination of the values of an engine's dimensions for
// a workload (engine.Info.DimsWith): its sub-benchmark name parts
// ("mode=txn", "" when the engine has none) and what it sets.
type Variant struct {
	Name string
	// Tweak sets the open options; nil when no dimension touches them.
	Tweak func(*engine.Options)
	// Iter sets each iterator's options.
	Iter func(*engine.IterOptions)
}

// Variants is every combination of the engine's dimensions that are one
// of caps, the first dimension outermost, each value in its declared
// order. An engine without any has one Variant: the run's options as they
// are.
func Variants(info engine.Info, caps ...engine.Capability) []Variant {
	out := []Variant{{}}
	for _, d := range info.DimsWith(caps...) {
		var next []Variant
		for _, prev := range out {
			for _, v := range d.Values {
				n := SubName(d.Name, v)
				if prev.Name != "" {
					n = prev.Name + "/" + n
				}
				next = append(next, Variant{
					Name: n,
					Tweak: func(o *engine.Options) {
						if prev.Tweak != nil {
							prev.Tweak(o)
						}
						if d.Apply != nil {
							d.Apply(v, o, &engine.IterOptions{})
						}
					},
					Iter: func(it *engine.IterOptions) {
						if prev.Iter != nil {
							prev.Iter(it)
						}
						if d.Apply != nil {
							d.Apply(v, &engine.Options{}, it)
						}
					},
				})
			}
		}
		out = next
	}
	return out
}
