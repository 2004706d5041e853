// Package benchpattern splits a -test.bench pattern the way the testing
// package does, for the suite's plan and for benchstat/sim, which must
// select exactly the benchmarks go test would.
package benchpattern

// Split is testing.splitRegexp (src/testing/match.go): alternatives,
// split on '|' outside brackets and parentheses, each a list of levels,
// split on '/'.
func Split(s string) [][]string {
	var alts [][]string
	var levels []string
	cs, cp := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			cs++
		case ']':
			if cs--; cs < 0 { // an unmatched ']' is legal
				cs = 0
			}
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 {
				cp--
			}
		case '\\':
			i++
		case '/', '|':
			if cs == 0 && cp == 0 {
				levels = append(levels, s[:i])
				if s[i] == '|' {
					alts, levels = append(alts, levels), nil
				}
				s, i = s[i+1:], 0
				continue
			}
		}
		i++
	}
	return append(alts, append(levels, s))
}
