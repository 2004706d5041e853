package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

func init() {
	register(cli.New(cli.Spec[struct{}]{
		Name:    "screenshot",
		Summary: "the README's pictures: docs/img/report.png or docs/img/history.png, in headless Chromium",
		Usage:   screenshotUsage,
		Run:     runScreenshot,
	}))
}

// screenshot is one of the README's pictures: the page a step writes
// into a directory of its own, and the window it is taken at.
type screenshot struct {
	png, page, window string
	write             func(dir string) task
}

var screenshots = map[string]screenshot{
	// The page of the summary test's results file at a laptop's width.
	"report": {"docs/img/report.png", "report.html", "1280,2000", func(dir string) task {
		return inProcess("report", []string{"-o", filepath.Join(dir, "report.html"), "benchstat/internal/summary/testdata/bench.txt"}, "")
	}},
	// The history page of the lab's history tests' demo history (a test of
	// the lab's module, built here alone).
	"history": {"docs/img/history.png", "history.html", "1280,1600", func(dir string) task {
		return task{args: []string{goTool(), "-C", "benchstat/lab", "test", "-count", "1", "-run", "^TestDemoPage$", "./history", "-args", "-demo=" + filepath.Join(dir, "history.html")},
			out: os.DevNull, quiet: true}
	}},
}

const screenshotUsage = `usage: kvb screenshot report|history

Writes docs/img/report.png (the report page of the summary test's results
file) or docs/img/history.png (the history page of the lab's demo
history, benchstat/lab/history), each at a laptop's width, through
headless Chromium, which it installs first as kvb deps chromium does.
`

func runScreenshot(c cli.Call, _ struct{}, which []string) int {
	s, ok := screenshots[strings.Join(which, " ")]
	if !ok {
		return c.Usage("which picture: report or history")
	}
	if code := install(deps["chromium"], false, c.Stderr); code != 0 {
		return code
	}
	dir, err := os.MkdirTemp("", "kvbench-screenshot-")
	if err != nil {
		fmt.Fprintln(c.Stderr, "kvb screenshot:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	shot := task{args: []string{"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile"),
		"--window-size=" + s.window, "--screenshot=" + s.png, "file://" + filepath.Join(dir, s.page)}, mute: true}
	return runSteps(c, "screenshot", "", false, "", []task{s.write(dir), shot})
}
