package gate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rounds writes a benchfmt file of one benchmark's rounds: ns/op around
// 1000 with a level shared by base and head each round, head slower by
// shift.
func rounds(rng *rand.Rand, name string, n int, shift float64) (base, head string) {
	var b, h strings.Builder
	for _, w := range []*strings.Builder{&b, &h} {
		w.WriteString("goos: linux\nUnit ops/s better=higher\n")
	}
	for range n {
		lvl := 1000 * math.Exp(0.05*rng.NormFloat64())
		fmt.Fprintf(&b, "Benchmark%s-2 1000 %.1f ns/op\n", name, lvl*math.Exp(0.01*rng.NormFloat64()))
		fmt.Fprintf(&h, "Benchmark%s-2 1000 %.1f ns/op\n", name, lvl*(1+shift)*math.Exp(0.01*rng.NormFloat64()))
	}
	return b.String(), h.String()
}

// TestCommand runs the gate as CI does: exit 0, 1 and 2.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(10, 11))
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b, h := rounds(rng, "ReadRandomBolt", 10, 0.2)
	b3, _ := rounds(rng, "ReadRandomBolt", 3, 0)
	other, _ := rounds(rng, "ReadRandomPebble", 10, 0)
	base, slow := write("base.txt", b), write("slow.txt", h)
	three := write("three.txt", b3)
	gone := write("gone.txt", other)
	empty := write("empty.txt", "goos: linux\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{base, base}, 0, "kvbench gate: pass"},
		{[]string{base, slow}, 1, "FAIL, 1 regression"},
		{[]string{"-threshold", "30", base, slow}, 0, "kvbench gate: pass"},
		{[]string{base, slow, "-threshold", "30"}, 0, "kvbench gate: pass"},
		{[]string{three, three}, 2, "needs at least 5"},
		{[]string{"-holm", base, gone}, 1, "MISSING"},
		{[]string{"-allow_removed", base, gone}, 0, "removal allowed"},
		{[]string{base}, 2, "usage"},
		{[]string{"-alpha", "2", base, base}, 2, "-alpha 2"},
		{[]string{"-units", "(", base, base}, 2, "-units ("},
		{[]string{"-units", "^ops/s$", base, slow}, 0, "kvbench gate: pass"},
		{[]string{base, empty}, 2, "no benchmark results in " + empty},
		{[]string{base, filepath.Join(dir, "nope.txt")}, 2, "nope.txt"},
		{[]string{"-h"}, 0, "usage: kvb gate"},
	} {
		var out bytes.Buffer
		code := Command.Run(c.args, &out, &out)
		if code != c.code || !strings.Contains(out.String(), c.want) {
			t.Errorf("gate %v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.want, out.String())
		}
	}
}
