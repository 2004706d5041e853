package spectrum

import (
	"strings"
	"testing"
)

func TestParseAndRender(t *testing.T) {
	in := `# BenchmarkX: latency from intended start, ns
 Value	Percentile	TotalCount	1/(1-Percentile)

    1000.000     0.000000            1         1.00
    2000.000     0.500000           50         2.00
    9000.000     0.990000           99       100.00
   10000.000     1.000000          100          inf
#[Mean    =     2000.000, StdDeviation   =     1000.000]
`
	pts, err := parse(strings.NewReader(in))
	if err != nil || len(pts) != 3 || pts[2] != (point{0.99, 9000}) {
		t.Fatalf("parse: %v %v", pts, err)
	}
	var b strings.Builder
	render(&b, "t", []series{{"a<b", pts}})
	s := b.String()
	if !strings.HasPrefix(s, "<svg") || !strings.Contains(s, "<path d=\"M") || !strings.Contains(s, "a&lt;b") {
		t.Fatalf("render:\n%s", s)
	}
}
