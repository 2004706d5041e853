package history

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvbench/kvbench/benchstat/lab/internal/history"
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
