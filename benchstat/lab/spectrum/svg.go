package spectrum

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

type point struct{ p, ns float64 } // p in [0,1)

type series struct {
	name string
	pts  []point
}

// parse reads the Value and Percentile columns of a spectrum, skipping
// headers, comments and the final point at percentile 1.
func parse(r io.Reader) ([]point, error) {
	var pts []point
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil || p >= 1 {
			continue
		}
		pts = append(pts, point{p, v})
	}
	return pts, sc.Err()
}

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

const (
	width, height = 760, 420
	left, right   = 70, 190
	top, bottom   = 30, 50
	maxX          = 1e5 // 99.999%
)

func render(w io.Writer, title string, ss []series) {
	maxY := 0.0
	for _, s := range ss {
		for _, pt := range s.pts {
			maxY = math.Max(maxY, pt.ns/1e6)
		}
	}
	maxY = niceCeil(maxY)
	pw, ph := float64(width-left-right), float64(height-top-bottom)
	x := func(p float64) float64 {
		return left + pw*math.Log10(math.Min(1/(1-p), maxX))/math.Log10(maxX)
	}
	y := func(ms float64) float64 { return top + ph*(1-ms/maxY) }
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="18" font-size="14">%s</text>`+"\n", left, esc(title))
	for i, lbl := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		xv := left + pw*float64(i)/5
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", xv, top, xv, height-bottom)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", xv, height-bottom+16, lbl)
	}
	fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">percentile</text>`+"\n", left+pw/2, height-12)
	for i := 0; i <= 5; i++ {
		ms := maxY * float64(i) / 5
		fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(ms), width-right, y(ms))
		fmt.Fprintf(w, `<text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n", left-6, y(ms)+4, ms)
	}
	fmt.Fprintf(w, `<text x="16" y="%.1f" transform="rotate(-90 16 %.1f)" text-anchor="middle">latency (ms)</text>`+"\n", top+ph/2, top+ph/2)
	for i, s := range ss {
		c := colors[i%len(colors)]
		var b strings.Builder
		for j, pt := range s.pts {
			if 1/(1-pt.p) > maxX {
				break
			}
			if j == 0 {
				b.WriteString("M")
			} else {
				b.WriteString(" L")
			}
			fmt.Fprintf(&b, "%.1f %.1f", x(pt.p), y(pt.ns/1e6))
		}
		fmt.Fprintf(w, `<path d="%s" fill="none" stroke="%s" stroke-width="1.6"/>`+"\n", b.String(), c)
		ly := top + 16*i + 8
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", width-right+10, ly, width-right+28, ly, c)
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", width-right+34, ly+4, esc(s.name))
	}
	fmt.Fprintln(w, "</svg>")
}

// niceCeil rounds up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*e {
			return m * e
		}
	}
	return 10 * e
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
