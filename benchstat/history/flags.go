package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/benchstat/internal/history"
)

// labelFlag collects repeated -label k=v.
type labelFlag []history.Label

func (l *labelFlag) String() string {
	var s []string
	for _, x := range *l {
		s = append(s, x.String())
	}
	return strings.Join(s, " ")
}

func (l *labelFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(k) != k {
		return fmt.Errorf("%q is not key=value (a key without spaces around it)", v)
	}
	if val == "" {
		return errors.New("empty value for " + k)
	}
	*l = append(*l, history.Label{Key: k, Value: val})
	return nil
}

// parseInterspersed parses args with flags before, between and after the
// positional arguments (add FILE... -label k=v), which flag.Parse alone
// stops at. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
