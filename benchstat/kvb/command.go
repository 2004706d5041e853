package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// output runs name with args in dir and returns its standard output. A
// failure returns the program's own message (its standard error) after
// its name and subcommand, so a step that stops the run says what stopped
// it.
func output(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	out, _, err := execute(ctx, dir, env, name, args...)
	return out, err
}

// execute is output that also returns the standard error of a run that
// succeeded: the go command says there what it resolved on its own.
func execute(ctx context.Context, dir string, env []string, name string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(e.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", e.String(), fmt.Errorf("%s %s: %s", name, args[0], msg)
	}
	return strings.TrimSpace(o.String()), e.String(), nil
}

// git runs git in dir.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return output(ctx, dir, nil, "git", args...)
}

// shortCommit is a commit's first 7 characters.
func shortCommit(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return c
}

// commitOf resolves ref to a commit of the repository at dir; "" when it
// names none.
func commitOf(ctx context.Context, dir, ref string) string {
	sha, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return sha
}
