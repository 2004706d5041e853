package kvbench

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/flagreg"
)

// docPage is a page the docs checks read, and its text.
type docPage struct{ file, text string }

// docPages are README.md and every page under docs/.
func docPages(t *testing.T) []docPage {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	var out []docPage
	for _, f := range append([]string{"README.md"}, files...) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, docPage{f, string(data)})
	}
	return out
}

// prose is a page's text outside fenced code blocks, with inline code
// blanked, so that neither a command nor an example reads as a link.
// Lines keep their numbers.
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	out := make([]string, len(lines))
	fenced := false
	code := regexp.MustCompile("`[^`]*`")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out[i] = code.ReplaceAllString(l, "``")
		}
	}
	return out
}

// fencedLines are the lines inside a page's fenced code blocks.
func fencedLines(text string) []string {
	var out []string
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			out = append(out, l)
		}
	}
	return out
}

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchors are the heading anchors GitHub gives a page: each heading
// lowercased, inline code marks and punctuation but '-' and '_' dropped,
// spaces turned to '-'; a repeated heading gets -1, -2, ...
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// headingText is a page's headings with inline code kept, for anchors:
// prose blanks inline code, and headings such as "A memory budget
// (-mem_limit)" carry it.
func headingText(text string) string {
	var b strings.Builder
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced && strings.HasPrefix(l, "#") {
			b.WriteString(strings.ReplaceAll(l, "`", "") + "\n")
		}
	}
	return b.String()
}

// TestDocLinksResolve: every relative link in README.md and docs/*.md
// names a file of the repository, and an anchor on a Markdown page names
// one of its headings.
func TestDocLinksResolve(t *testing.T) {
	checked := 0
	for _, page := range docPages(t) {
		file := page.file
		for i, l := range prose(page.text) {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
				}
				checked++
				rel, err := filepath.Rel(".", dest)
				if err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d: link %q leaves the repository", file, i+1, target)
					continue
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %q: no file %s", file, i+1, target, dest)
					continue
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				page, err := os.ReadFile(dest)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(headingText(string(page)))[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", file, i+1, target, dest, anchor)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: the link pattern no longer matches the pages", checked)
	}
}

// TestAnchorsAsGitHubMakesThem pins the anchor rule on headings the pages
// link to.
func TestAnchorsAsGitHubMakesThem(t *testing.T) {
	got := anchors(headingText("## A memory budget (`-mem_limit`)\n## The scheduler's wait beside a read's `sched-p99-ns`\n## Steady state: `BenchmarkOverwrite<Engine>`\n## x\n## x\n"))
	for _, want := range []string{"a-memory-budget--mem_limit", "the-schedulers-wait-beside-a-reads-sched-p99-ns", "steady-state-benchmarkoverwriteengine", "x", "x-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
}

// registry is every flag of the suite (core.Flags: the shared settings,
// the engines' options, the workloads' flags) with its default as the
// command line writes it.
func registry() map[string]string {
	out := map[string]string{}
	for _, o := range core.Flags() {
		out[o.FlagName()] = flagreg.Text(o)
	}
	return out
}

type flagRow struct {
	line     int
	names    []string
	defaults string
}

// flagTable reads the table of docs/flags.md: the rows under the header
// "| flag | default | meaning |".
func flagTable(t *testing.T) []flagRow {
	t.Helper()
	data, err := os.ReadFile("docs/flags.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("`-([a-z0-9_]+)`")
	var rows []flagRow
	in := false
	for i, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "| flag | default |"):
			in = true
			continue
		case !in || strings.HasPrefix(l, "|---"):
			continue
		case !strings.HasPrefix(l, "|"):
			in = false
			continue
		}
		cells := strings.Split(l, "|")
		if len(cells) < 4 {
			t.Fatalf("docs/flags.md:%d: not a row of three cells: %s", i+1, l)
		}
		r := flagRow{line: i + 1, defaults: strings.TrimSpace(cells[2])}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			r.names = append(r.names, m[1])
		}
		if len(r.names) == 0 {
			t.Fatalf("docs/flags.md:%d: no flag named in %q", i+1, cells[1])
		}
		rows = append(rows, r)
	}
	if len(rows) < 40 {
		t.Fatalf("docs/flags.md: %d rows read; the table's header changed?", len(rows))
	}
	return rows
}

// isProse: a default cell that is words rather than a value ("Badger's
// own (1 MiB ...)", "user cache dir"): the flag's own default is empty and
// the engine or the machine decides.
func isProse(s string) bool {
	return strings.ContainsAny(s, " (")
}

// sameDefault compares a table cell with a flag's DefValue, in the forms
// a reader writes them: "none" or empty for unset, 1.0 for 1, 5s for 5s.
func sameDefault(doc, reg string) bool {
	doc = strings.Trim(doc, "`")
	if doc == reg {
		return true
	}
	if doc == "none" || doc == "" {
		return reg == ""
	}
	if a, err := strconv.ParseFloat(doc, 64); err == nil {
		b, err := strconv.ParseFloat(reg, 64)
		return err == nil && a == b
	}
	if a, err := time.ParseDuration(doc); err == nil {
		b, err := time.ParseDuration(reg)
		return err == nil && a == b
	}
	return false
}

// TestFlagTableMatchesRegistry: every flag docs/flags.md names exists,
// with the default its row states, and every flag of the suite has a row.
func TestFlagTableMatchesRegistry(t *testing.T) {
	flags := registry()
	documented := map[string]bool{}
	for _, r := range flagTable(t) {
		defaults := []string{r.defaults}
		if len(r.names) > 1 {
			// "-knee_flushes, -knee_max_time | 5, 20s": one default each.
			defaults = strings.Split(r.defaults, ", ")
			if len(defaults) != len(r.names) {
				t.Errorf("docs/flags.md:%d: %d flags and %d defaults (%q)", r.line, len(r.names), len(defaults), r.defaults)
				continue
			}
		}
		for i, n := range r.names {
			documented[n] = true
			def, ok := flags[n]
			if !ok {
				t.Errorf("docs/flags.md:%d: -%s is not a flag of the suite", r.line, n)
				continue
			}
			d := defaults[min(i, len(defaults)-1)]
			if isProse(d) {
				if def != "" {
					t.Errorf("docs/flags.md:%d: -%s's default is written as %q, but the flag has one of its own: %q", r.line, n, d, def)
				}
				continue
			}
			if !sameDefault(d, def) {
				t.Errorf("docs/flags.md:%d: -%s's default is %q there and %q in the suite", r.line, n, d, def)
			}
		}
	}
	for name, def := range flags {
		if !documented[name] {
			t.Errorf("-%s (default %q) has no row in docs/flags.md", name, def)
		}
	}
}

// goTestFlags are go test's and the testing package's own flags a
// recipe may give.
var goTestFlags = map[string]bool{
	"run": true, "bench": true, "benchtime": true, "count": true, "cpu": true, "timeout": true,
	"tags": true, "v": true, "overlay": true, "c": true, "o": true, "short": true, "benchmem": true,
	"skip": true, "failfast": true, "race": true, "json": true, "cpuprofile": true, "memprofile": true,
}

// ranAsRecorded are commands the seed pages give as the exact command of
// a recorded run; they stay as they were run.
var ranAsRecorded = []string{
	"go test -tags rocksdb -bench BenchmarkKnee -count 2 -timeout 0 -v -dir $D",
	"go test -tags rocksdb -bench '^BenchmarkKnee(Badger|Pebble|RocksDB)$/op=upsert' -knee_flushes 5 -timeout 0 -v -dir $D",
}

// TestRecipesSkipTestsAndUseRealFlags: every go test -bench command in a
// code block of README.md or docs/*.md runs no test (-run '^$': without
// it go test first runs every test of the package), and every flag it
// gives is go test's or the suite's.
func TestRecipesSkipTestsAndUseRealFlags(t *testing.T) {
	flags := registry()
	flagRE := regexp.MustCompile(`(?:^|\s)-([a-z][a-z0-9_]*)`)
	n := 0
	for _, page := range docPages(t) {
		file := page.file
		for _, l := range fencedLines(page.text) {
			cmd := strings.TrimSpace(l)
			if c, _, ok := strings.Cut(cmd, " #"); ok {
				cmd = strings.TrimSpace(c)
			}
			i := strings.Index(cmd, "go test ")
			if i < 0 || !strings.Contains(cmd, "-bench") {
				continue
			}
			cmd = cmd[i:]
			recorded := false
			for _, r := range ranAsRecorded {
				recorded = recorded || strings.TrimSpace(l) == r
			}
			n++
			if !recorded && !strings.Contains(cmd, "-run '^$'") {
				t.Errorf("%s: %q lacks -run '^$'", file, cmd)
			}
			// Flags only: quoted arguments (patterns) and $(...) go first.
			bare := regexp.MustCompile(`'[^']*'|\$\([^)]*\)`).ReplaceAllString(cmd, "''")
			bare, _, _ = strings.Cut(bare, " > ")
			for _, m := range flagRE.FindAllStringSubmatch(bare, -1) {
				if _, ok := flags[m[1]]; !ok && !goTestFlags[m[1]] {
					t.Errorf("%s: %q: -%s is neither go test's flag nor the suite's", file, cmd, m[1])
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("only %d go test commands found", n)
	}
}

// TestRecipesMakeTheDirectoriesTheyName: a recipe that gives a flag whose
// directory must exist already (its usage says "existing directory")
// creates it first, in the same line (mkdir -p DIR && go test ...).
func TestRecipesMakeTheDirectoriesTheyName(t *testing.T) {
	var dirFlags []string
	for _, o := range core.Flags() {
		if strings.HasPrefix(o.FlagUsage(), "existing directory") {
			dirFlags = append(dirFlags, o.FlagName())
		}
	}
	if len(dirFlags) == 0 {
		t.Fatal("no flag of the suite takes an existing directory: the usage text changed?")
	}
	n := 0
	for _, page := range docPages(t) {
		file := page.file
		for _, l := range fencedLines(page.text) {
			for _, f := range dirFlags {
				m := regexp.MustCompile(`\s-` + f + `[ =](\S+)`).FindStringSubmatch(l)
				if m == nil {
					continue
				}
				n++
				if !strings.Contains(l, "mkdir -p "+m[1]+" && ") {
					t.Errorf("%s: %q gives -%s %s without creating it first (mkdir -p %s && ...)", file, strings.TrimSpace(l), f, m[1], m[1])
				}
			}
		}
	}
	if n == 0 {
		t.Error("no recipe gives a flag that takes an existing directory: the check reads nothing")
	}
}

// TestProseNamesWholeFlags: a flag named in the pages' text (`-name`) that
// is not one of the suite's, but the start of one (-keys for -keys_mil),
// is a misspelling.
func TestProseNamesWholeFlags(t *testing.T) {
	flags := registry()
	inline := regexp.MustCompile("`-([a-z][a-z0-9_]*)[` ]")
	for _, page := range docPages(t) {
		file := page.file
		fenced := false
		for i, l := range strings.Split(page.text, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				fenced = !fenced
			}
			if fenced {
				continue
			}
			for _, m := range inline.FindAllStringSubmatch(l, -1) {
				name := m[1]
				if _, ok := flags[name]; ok || goTestFlags[name] {
					continue
				}
				for f := range flags {
					if strings.HasPrefix(f, name+"_") {
						t.Errorf("%s:%d: -%s is no flag of the suite; -%s?", file, i+1, name, f)
						break
					}
				}
			}
		}
	}
}
