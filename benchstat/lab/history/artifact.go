package history

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
	"github.com/kvbench/kvbench/benchstat/internal/gate"
)

const artifactUsage = `usage: kvb history artifact [-mode time|sim|both] [-label k=v]... [-base k=v]... [-head k=v]... OUT_DIR COMPARE_DIR

Copies each side of a kvb compare run (COMPARE_DIR/base.txt, head.txt,
and with -mode both sim-base.txt, sim-head.txt) to OUT_DIR, each preceded
by configuration lines that kvb history add keeps as the run's labels:
role (base or head), mode (time or sim), what COMPARE_DIR/gate.json says
the side is (ref, commit, commit-date, and with -module the module and
kvbench-commit), the -label pairs, and the -base or -head pairs of its
side, then date (a -label's, else when the comparison started, else now,
in UTC). A later line of a key wins. The copies stay benchfmt: benchstat
reads them, every line applying to the results after it. Record a
comparison with kvb history add OUT_DIR/*.txt; where a workflow uploads
results of one runner, give -label machine=NAME (docs/history.md, "More
than one machine").

-mode says which mode base.txt and head.txt were measured in, as given to
kvb compare (default: gate.json's, else time). Keys are benchfmt's: a
lower-case letter first, no spaces or colons. Exits 2 on a usage error,
before writing.

`

// labelPairs collects repeated -flag k=v, kept as given.
type labelPairs []string

// pairKey is a configuration line's key: a lower-case letter, then no
// spaces or colons.
var pairKey = regexp.MustCompile(`^[a-z][^\s:]*$`)

func (p *labelPairs) String() string { return strings.Join(*p, " ") }

func (p *labelPairs) Set(v string) error {
	k, _, ok := strings.Cut(v, "=")
	if !ok || !pairKey.MatchString(k) || strings.Contains(v, "\n") {
		return errors.New("want key=value, the key a lower-case letter then no spaces or colons")
	}
	*p = append(*p, v)
	return nil
}

// artifactFlags are artifact's flags.
type artifactFlags struct {
	mode              string
	label, base, head labelPairs
}

var artifactCommand = cli.New(cli.Spec[*artifactFlags]{
	Name:  "history artifact",
	Usage: artifactUsage,
	Flags: newArtifactFlags,
	Run:   artifact,
})

func newArtifactFlags(fs *flag.FlagSet) *artifactFlags {
	a := &artifactFlags{}
	fs.StringVar(&a.mode, "mode", "", "the mode base.txt and head.txt were measured in: time, sim, or both (sim-base.txt and sim-head.txt are sim); default gate.json's, else time")
	fs.Var(&a.label, "label", "key=value for both sides; repeat for more (date=… replaces now)")
	fs.Var(&a.base, "base", "key=value for the base side only (ref, branch, commit, commit-date); repeat for more")
	fs.Var(&a.head, "head", "key=value for the head side only; repeat for more")
	return a
}

// compareFiles are the results files of a kvb compare directory, in the
// order they are copied.
var compareFiles = []string{"base.txt", "head.txt", "sim-base.txt", "sim-head.txt"}

// artifact is kvb history artifact.
func artifact(c cli.Call, a *artifactFlags, pos []string) int {
	if a.mode != "" && a.mode != "time" && a.mode != "sim" && a.mode != "both" {
		return c.Usage("-mode %s: must be time, sim or both", a.mode)
	}
	if len(pos) != 2 {
		return c.Usage("want OUT_DIR and COMPARE_DIR, got %q", pos)
	}
	out, dir := pos[0], pos[1]
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		fmt.Fprintf(c.Stderr, "kvb history artifact: %s: not a directory\n", dir)
		return 2
	}
	var files []string
	for _, f := range compareFiles {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.Size() > 0 {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		fmt.Fprintf(c.Stderr, "kvb history artifact: %s holds no kvb compare results (%s)\n", dir, strings.Join(compareFiles, ", "))
		return 2
	}
	for _, f := range files {
		if err := ownCopy(filepath.Join(out, f)); err != nil {
			fmt.Fprintf(c.Stderr, "kvb history artifact: %v\n", err)
			return 2
		}
	}
	gateMode, sides := fromGate(dir)
	mode := cmp.Or(a.mode, gateMode, "time")
	date := cmp.Or(sides["base"]["date"], time.Now().UTC().Format("2006-01-02T15:04:05Z"))
	for _, kv := range a.label {
		if d, ok := strings.CutPrefix(kv, "date="); ok && d != "" {
			date = d
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(c.Stderr, "kvb history artifact:", err)
		return 1
	}
	for _, f := range files {
		role := strings.TrimSuffix(f, ".txt")
		m := mode
		if m == "both" {
			m = "time"
			if strings.HasPrefix(role, "sim-") {
				m = "sim"
			}
		}
		role = strings.TrimPrefix(role, "sim-")
		side := a.base
		if role == "head" {
			side = a.head
		}
		var head bytes.Buffer
		fmt.Fprintf(&head, "role: %s\nmode: %s\n", role, m)
		var recorded labelPairs
		for _, k := range slices.Sorted(maps.Keys(sides[role])) {
			recorded = append(recorded, k+"="+sides[role][k])
		}
		for _, kv := range slices.Concat(recorded, a.label, side) {
			if k, v, _ := strings.Cut(kv, "="); k != "date" {
				fmt.Fprintf(&head, "%s: %s\n", k, v)
			}
		}
		fmt.Fprintf(&head, "date: %s\n", date)
		raw, err := os.ReadFile(filepath.Join(dir, f))
		if err == nil {
			err = os.WriteFile(filepath.Join(out, f), append(head.Bytes(), raw...), 0o644)
		}
		if err != nil {
			fmt.Fprintln(c.Stderr, "kvb history artifact:", err)
			return 1
		}
		fmt.Fprintf(c.Stderr, "kvb history artifact: %s (%s, %s)\n", filepath.Join(out, f), role, m)
	}
	return 0
}

// fromGate is what COMPARE_DIR/gate.json says of a comparison, when kvb
// compare wrote one: the mode its rounds ran in, and each side's labels
// by role.
func fromGate(dir string) (mode string, sides map[string]map[string]string) {
	raw, err := os.ReadFile(filepath.Join(dir, "gate.json"))
	if err != nil {
		return "", nil
	}
	var r gate.Report
	if json.Unmarshal(raw, &r) != nil {
		return "", nil
	}
	switch len(r.Modes) {
	case 1:
		mode = r.Modes[0].Mode
	case 2:
		mode = "both"
	}
	return mode, r.Sides
}

// ownCopy refuses a file at path that an earlier artifact did not write
// (its first line is not a role line), so a copy never replaces
// anything else.
func ownCopy(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	first, _ := bufio.NewReader(f).ReadString('\n')
	if !strings.HasPrefix(first, "role: ") {
		return fmt.Errorf("%s exists and is not a copy kvb history artifact wrote; choose another OUT_DIR", path)
	}
	return nil
}
