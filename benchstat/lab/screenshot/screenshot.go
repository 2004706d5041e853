// Package screenshot is kvb screenshot: the README's pictures, the report
// page (the product's kvb report, called in process) and the lab's
// history page, each taken in headless Chromium at a laptop's width. It
// runs from the repository's root (make report-screenshot,
// history-screenshot, which install Chromium first):
//
//	results/kvb-lab screenshot report|history
package screenshot

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/report"
)

// Command is kvb screenshot.
var Command = cli.New(cli.Spec[struct{}]{
	Name:    "screenshot",
	Summary: "the README's pictures: docs/img/report.png or docs/img/history.png, in headless Chromium",
	Usage:   usage,
	Run:     run,
})

const usage = `usage: kvb screenshot report|history

Writes docs/img/report.png (the report page of the summary test's results
file) or docs/img/history.png (the history page of the lab's demo
history, benchstat/lab/history), each at a laptop's width, through
headless Chromium, which make report-deps installs. It runs from the
repository's root.
`

// picture is one of the README's pictures: the page a step writes into a
// directory of its own, and the window it is taken at.
type picture struct {
	png, page, window string
	write             func(c cli.Call, dir string) int
}

var pictures = map[string]picture{
	// The page of the summary test's results file, by the product's kvb
	// report in this process.
	"report": {"docs/img/report.png", "report.html", "1280,2000", func(c cli.Call, dir string) int {
		args := []string{"-o", filepath.Join(dir, "report.html"), "benchstat/internal/summary/testdata/bench.txt"}
		fmt.Fprintln(c.Stderr, shellJoin(append([]string{"kvb", "report"}, args...)))
		if code := report.Command.Run(args, c.Stdout, c.Stderr); code != 0 {
			fmt.Fprintf(c.Stderr, "kvb screenshot: kvb report: exit status %d\n", code)
			return code
		}
		return 0
	}},
	// The history page of the lab's history tests' demo history (a test of
	// this module, built here alone).
	"history": {"docs/img/history.png", "history.html", "1280,1600", func(c cli.Call, dir string) int {
		cmd := exec.Command(cmp.Or(os.Getenv("GO"), "go"), "-C", "benchstat/lab", "test", "-count", "1", "-run", "^TestDemoPage$", "./history",
			"-args", "-demo="+filepath.Join(dir, "history.html"))
		fmt.Fprintln(c.Stderr, shellJoin(cmd.Args)+" > /dev/null")
		cmd.Stderr = c.Stderr
		return runCmd(c, cmd)
	}},
}

func run(c cli.Call, _ struct{}, which []string) int {
	p, ok := pictures[strings.Join(which, " ")]
	if !ok {
		return c.Usage("which picture: report or history")
	}
	if _, err := exec.LookPath("chromium"); err != nil {
		fmt.Fprintln(c.Stderr, "kvb screenshot: chromium is not installed: make report-deps installs it")
		return 1
	}
	dir, err := os.MkdirTemp("", "kvbench-screenshot-")
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb screenshot:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if code := p.write(c, dir); code != 0 {
		return code
	}
	// Chromium's own chatter on standard error is dropped.
	shot := exec.Command("chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--window-size="+p.window, "--screenshot="+p.png, "file://"+filepath.Join(dir, p.page))
	fmt.Fprintln(c.Stderr, shellJoin(shot.Args)+" 2>/dev/null")
	shot.Stdout = c.Stdout
	return runCmd(c, shot)
}

// runCmd runs cmd: exit 0, else its status (1 when it did not run), said
// as kvb's steps say it.
func runCmd(c cli.Call, cmd *exec.Cmd) int {
	err := cmd.Run()
	if err == nil {
		return 0
	}
	fmt.Fprintf(c.Stderr, "kvb screenshot: %s: %v\n", cmd.Args[0], err)
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	return 1
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellJoin is args as a POSIX shell would take them, quoted where needed.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if !plainWord.MatchString(a) {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}
