package core

import "github.com/kvbench/kvbench/internal/engine"

// Variant is one combination of the values of an engine's dimensions
// (engine.Info.DimsWith): its name parts ("mode=txn", "" for none) and
// what it sets.
type Variant struct {
	Name  string
	Tweak func(*engine.Options)     // the open options; nil for none
	Iter  func(*engine.IterOptions) // each iterator's options
}

// Variants is every combination of the engine's dimensions with one of
// caps, the first outermost, values in order; without any, one Variant.
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
