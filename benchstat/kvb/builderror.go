package main

import (
	"regexp"
	"strings"
)

// buildError is a side the suite does not build with: the step's own
// error, and why in one line (the compiler's first error, or the version
// go would build instead), which kvb versions reports for every version.
type buildError struct {
	what   string // the step: "building base with go.etcd.io/bbolt v1.4.3"
	reason string // one line
	err    error  // the go command's own error; nil when reason says it all
}

func (e *buildError) Error() string {
	if e.err != nil {
		return e.what + ": " + e.err.Error()
	}
	return e.what + ": " + e.reason
}

func (e *buildError) Unwrap() error { return e.err }

// compileError is a compiler's error line: file.go:line[:col]: message.
var compileError = regexp.MustCompile(`(?m)^[^ #][^ :]*\.go:[0-9]+(:[0-9]+)?: .*$`)

// firstError is the first error in a go build's standard error: the
// compiler's first, else the first line that is not progress.
func firstError(log string) string {
	if m := compileError.FindString(log); m != "" {
		return m
	}
	for _, l := range strings.Split(log, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "go: downloading ") || strings.HasPrefix(l, "go: finding ") || strings.HasPrefix(l, "go: found ") {
			continue
		}
		return l
	}
	return "(no output)"
}

// foundPackage is the package of module that go found at another
// version while building ("go: found PKG in MODULE VERSION"): the suite
// imports it, and the version asked for lacks it.
func foundPackage(log, module string) string {
	for _, l := range strings.Split(log, "\n") {
		rest, ok := strings.CutPrefix(l, "go: found ")
		if !ok {
			continue
		}
		if pkg, in, ok := strings.Cut(rest, " in "); ok && strings.HasPrefix(in, module+" ") {
			return pkg
		}
	}
	return ""
}
