package history

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kvbench/kvbench/benchstat/internal/cli"
)

const artifactUsage = `usage: kvb history artifact [-mode time|sim|both] [-label k=v]... [-base k=v]... [-head k=v]... OUT_DIR COMPARE_DIR

Copies each side of a kvb compare run (COMPARE_DIR/base.txt, head.txt,
and with -mode both sim-base.txt, sim-head.txt) to OUT_DIR, each preceded
by configuration lines that kvb history add keeps as the run's labels:
role (base or head), mode (time or sim), the -label pairs, and the -base
or -head pairs of its side (ref, commit, commit-date), then date (now, in
UTC, unless a -label gives one). The copies stay benchfmt: benchstat
reads them, every line applying to the results after it. Run it where a
workflow uploads results of one runner, with -label machine=NAME;
docs/history.md, "More than one machine".

-mode says which mode base.txt and head.txt were measured in, as given to
kvb compare. Keys are benchfmt's: a lower-case letter first, no spaces or
colons. Exits 2 on a usage error, before writing.

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
	fs.StringVar(&a.mode, "mode", "time", "the mode base.txt and head.txt were measured in: time, sim, or both (sim-base.txt and sim-head.txt are sim)")
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
	if a.mode != "time" && a.mode != "sim" && a.mode != "both" {
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
	date := time.Now().UTC().Format("2006-01-02T15:04:05Z")
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
		mode := a.mode
		if mode == "both" {
			mode = "time"
			if strings.HasPrefix(role, "sim-") {
				mode = "sim"
			}
		}
		role = strings.TrimPrefix(role, "sim-")
		side := a.base
		if role == "head" {
			side = a.head
		}
		var head bytes.Buffer
		fmt.Fprintf(&head, "role: %s\nmode: %s\n", role, mode)
		for _, kv := range append(append(labelPairs{}, a.label...), side...) {
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
		fmt.Fprintf(c.Stderr, "kvb history artifact: %s (%s, %s)\n", filepath.Join(out, f), role, mode)
	}
	return 0
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
