package core

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/kvbench/kvbench/internal/benchpattern"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// Plan is what the benchmarks a -bench pattern selects need from the disk.
type Plan struct {
	Pattern  string
	Targets  []Target   // top-level benchmarks the pattern selects
	Fixtures []*Fixture // every fixture they read, each once
	Scratch  int64      // the most they write outside fixtures at one time
	Margin   int64      // the largest free-space margin of their writers (writeMargin)
}

// NewPlan matches pattern against every top-level benchmark as go test
// does and collects what the selected ones declare.
func (e *Env) NewPlan(pattern string) (*Plan, error) {
	p := &Plan{Pattern: pattern}
	if pattern == "" {
		return p, nil
	}
	m, err := newMatcher(pattern)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	defer func() { e.planning = nil }()
	for _, t := range Targets() {
		if !m.match(t.Name()) || t.Info.Missing != "" {
			continue
		}
		p.Targets = append(p.Targets, t)
		if t.W.Fixtures != nil {
			e.planning = func(sub string) bool { return m.match(t.Name(), sub) }
			for _, bs := range e.blocks(t.Info) {
				e.block = bs
				for _, f := range t.W.Fixtures(e, t.Info) {
					if n := f.Params.Name(); !seen[n] {
						seen[n] = true
						p.Fixtures = append(p.Fixtures, f)
						m, _ := writeMargin(f.Engine, f.Options, e.Cfg.Batch, e.Cfg.ValSize)
						p.Margin = max(p.Margin, m)
					}
				}
			}
			e.block = 0
		}
		if t.W.Scratch != nil {
			if s := t.W.Scratch(e, t.Info); s > 0 {
				p.Scratch = max(p.Scratch, s)
				p.Margin = max(p.Margin, e.Cfg.WriteMargin(t.Info))
			}
		}
	}
	return p, nil
}

// TouchesDisk reports whether the run writes under -dir at all.
func (p *Plan) TouchesDisk() bool { return len(p.Fixtures) > 0 || p.Scratch > 0 }

// DiskEstimate is a generous bound on what the run writes under root:
// three times the logical bytes of every fixture not built yet, the
// scratch space, and the largest margin of their writers.
func (p *Plan) DiskEstimate(root string) int64 {
	n := p.Scratch
	for _, f := range p.Fixtures {
		if _, done := fixtureBuilt(filepath.Join(root, dataset.OwnedName), f); !done {
			n += 3 * f.LogicalBytes()
		}
	}
	if n > 0 {
		n += p.Margin
	}
	return n
}

// Reclaimable is the space under root the run frees before it writes:
// its fixtures' directories no manifest marks complete (Ensure rebuilds
// them) and scratch directories of runs that died (Setup removes them),
// under the suite's own directory only.
func (p *Plan) Reclaimable(root string) int64 {
	owned := filepath.Join(root, dataset.OwnedName)
	if !dataset.IsOwned(owned) {
		return 0
	}
	var dirs []string
	for _, f := range p.Fixtures {
		if dir, done := fixtureBuilt(owned, f); !done {
			dirs = append(dirs, dir)
		}
	}
	var n int64
	for _, d := range append(dirs, staleScratch(filepath.Join(owned, "scratch"))...) {
		if size, err := engine.DirSize(d); err == nil {
			n += size
		}
	}
	return n
}

// fixtureBuilt is f's directory under the suite's own, and whether its
// manifest marks it complete.
func fixtureBuilt(owned string, f *Fixture) (string, bool) {
	dir := filepath.Join(owned, "fixtures", f.Params.Name())
	m, err := dataset.ReadManifest(dir)
	return dir, err == nil && m.Complete(f.Params)
}

// matcher is testing's benchmark filter: alternatives, each one regexp
// per level (benchpattern.Split).
type matcher [][]*regexp.Regexp

func newMatcher(pattern string) (matcher, error) {
	var m matcher
	for _, alt := range benchpattern.Split(pattern) {
		var levels []*regexp.Regexp
		for _, s := range alt {
			re, err := regexp.Compile(s)
			if err != nil {
				return nil, fmt.Errorf("-test.bench %q: %v", pattern, err)
			}
			levels = append(levels, re)
		}
		m = append(m, levels)
	}
	return m, nil
}

// match reports whether the pattern selects the top-level benchmark top
// and, given sub, may run its sub-benchmark sub.
func (m matcher) match(top string, sub ...string) bool {
	return slices.ContainsFunc(m, func(alt []*regexp.Regexp) bool {
		return len(alt) > 0 && alt[0].MatchString(top) && (len(sub) == 0 || len(alt) < 2 || alt[1].MatchString(sub[0]))
	})
}

// Selects reports, while the plan collects a workload's fixtures, whether
// the pattern may run its sub-benchmark sub; at any other time, true.
func (e *Env) Selects(sub string) bool { return e.planning == nil || e.planning(sub) }
