package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// buildAll builds every version's test binary. A version the suite does
// not build with does not stop the others: the run stops after them all,
// naming each one that failed and why in one line (the compiler's first
// error, or the version go would build instead).
func (m *matrix) buildAll(ctx context.Context) error {
	if err := m.scratch(); err != nil {
		return err
	}
	var broken []string
	for _, v := range m.versions {
		err := m.build(ctx, v)
		var be *buildError
		switch {
		case err == nil:
			continue
		case ctx.Err() != nil:
			return err
		case errors.As(err, &be):
			broken = append(broken, fmt.Sprintf("%s %s: %s", m.module, v.label, be.reason))
		default:
			return err
		}
	}
	if len(broken) > 0 {
		at := shortCommit(m.suiteCommit)
		if m.dirtyTree {
			at += " with uncommitted changes"
		}
		// A line each, the last as the run's error.
		for _, b := range broken[:len(broken)-1] {
			m.logf("the suite at %s does not build with %s", at, b)
		}
		return fmt.Errorf("the suite at %s does not build with %s", at, broken[len(broken)-1])
	}
	m.logf("every version builds: %s %s", m.module, strings.Join(m.labels(), " "))
	return nil
}
