// Package historytest makes history from real results files for the
// history store's and report's tests.
package historytest

import (
	"strconv"
	"strings"
)

// Scale rewrites the lines of raw that start with prefix: each value in
// unit is multiplied by factor. Every other byte stays as it is.
func Scale(raw, prefix, unit string, factor float64) string {
	lines := strings.SplitAfter(raw, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		f := strings.Fields(l)
		for j := 3; j < len(f); j++ {
			if f[j] == unit {
				v, err := strconv.ParseFloat(f[j-1], 64)
				if err != nil {
					panic(err)
				}
				f[j-1] = strconv.FormatFloat(v*factor, 'f', -1, 64)
			}
		}
		lines[i] = strings.Join(f, "\t") + "\n"
	}
	return strings.Join(lines, "")
}
