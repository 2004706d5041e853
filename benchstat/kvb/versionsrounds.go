package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// stepCmd runs step s of version v once at benchtime: the step's flags,
// then the user's, then the run length.
func (m *matrix) stepCmd(ctx context.Context, v *side, s step, benchtime string) *exec.Cmd {
	args := testArgs(s.bench, s.flags...)
	args = append(args, m.args.suite...)
	cmd := exec.CommandContext(ctx, v.binary, append(args, "-test.benchtime="+benchtime)...)
	cmd.Dir = m.repo
	cmd.Stderr = m.stderr
	return cmd
}

// warmUp runs every step of every version once at one iteration before
// anything is timed (warmRun): each version builds or reuses fixtures of
// its own version, and a step that fails or matches no benchmark stops
// the run here.
func (m *matrix) warmUp(ctx context.Context) error {
	for _, v := range m.versions {
		for _, s := range m.steps {
			ran, err := warmRun(m.stepCmd(ctx, v, s, "1x"), m.stderr)
			if err != nil {
				return fmt.Errorf("%s fails its warm-up run of -bench '%s': %v", v.name(m.module), s.bench, err)
			}
			if !ran {
				return fmt.Errorf("-bench '%s': no benchmark of this suite matches (with %s)", s.bench, v.name(m.module))
			}
		}
	}
	return nil
}

// rounds runs -count interleaved rounds, every step of a version one
// after the other, into DIR/<version>.txt after its header, the order
// into DIR/order.txt.
func (m *matrix) rounds(ctx context.Context) error {
	var files []string
	for _, v := range m.versions {
		files = append(files, m.file(v))
	}
	n := m.args.count
	return interleaved(ctx, n, m.labels(), files, filepath.Join(m.args.out, "order.txt"),
		func(round int, order []string) {
			m.logf("round %d of %d (%s)", round, n, strings.Join(order, " "))
		},
		func(ctx context.Context, i, round int, out *os.File) error {
			v := m.versions[i]
			if round == 1 {
				if _, err := io.WriteString(out, m.header(v)); err != nil {
					return err
				}
			}
			for _, s := range m.steps {
				if err := m.runStep(ctx, v, s, out); err != nil {
					return fmt.Errorf("%s fails in round %d (%v); its output is in %s", v.name(m.module), round, err, out.Name())
				}
			}
			return nil
		})
}

func (m *matrix) runStep(ctx context.Context, v *side, s step, out io.Writer) error {
	cmd := m.stepCmd(ctx, v, s, s.benchtime)
	cmd.Stdout = out
	return cmd.Run()
}
