package summary

import (
	"bytes"
	"strings"
	"testing"
)

// killedSample is a memory-limited row where engines ended in their
// budget: Badger killed by the out-of-memory killer on reads and on
// populate, Pebble stopped at the row's time limit, RocksDB killed in
// one of its two rounds. Each kill is its watcher's line.
const killedSample = "testdata/killed.txt"

// TestKilledEngineCellSaysWhatTheBudgetHeld: a killed engine's cell in
// the budget table says how it ended and the anonymous memory, page
// cache and dirty pages of the watcher's last sample, never "killed"
// alone; a kill no table shows (populate in a budget) is a note of that
// table; an engine with other rounds shows them and notes the kill.
func TestKilledEngineCellSaysWhatTheBudgetHeld(t *testing.T) {
	r := readFile(t, killedSample)
	if len(r.Kills) != 4 || r.Skipped != 0 {
		t.Fatalf("read %d kills, skipped %d lines; want 4, 0: %+v", len(r.Kills), r.Skipped, r.Kills)
	}
	if _, ok := r.Run["kvbench"]; ok {
		t.Error("a report line was read as a configuration line")
	}
	s := Build(r)
	var budget *Table
	for i := range s.Tables {
		if strings.Contains(s.Tables[i].Title, "memory budget") {
			budget = &s.Tables[i]
		}
	}
	if budget == nil || len(budget.Rows) == 0 {
		t.Fatalf("no budget table: %+v", s.Tables)
	}
	cell := func(row int, col string) string {
		c, ok := budget.Rows[row].Cells[col]
		if !ok {
			return "-"
		}
		return CellText(c)
	}
	for col, want := range map[string]string{
		"Badger": "killed (OOM): anon 20.4 MiB, page cache 5.1 MiB, dirty 0 B at the kill",
		"Pebble": "stopped at MEM_TIMEOUT: anon 9.0 MiB, page cache 16.0 MiB, dirty 1.0 MiB at the end",
		"Bolt":   "7.87k",
	} {
		if got := cell(0, col); got != want {
			t.Errorf("%s %s: %q, want %q", budget.Rows[0].Label, col, got, want)
		}
	}
	if got := cell(1, "Badger"); got != "killed: see "+budget.Rows[0].Label {
		t.Errorf("%s Badger: %q", budget.Rows[1].Label, got)
	}
	if got := cell(0, "RocksDB"); got != "3.85k ±4%" {
		t.Errorf("RocksDB's surviving rounds: %q", got)
	}
	notes := strings.Join(budget.Notes, "\n")
	for _, want := range []string{
		"RocksDB: killed (OOM): anon 22.0 MiB, page cache 3.0 MiB, dirty 0 B at the kill (its other rounds shown)",
		"BenchmarkPopulateBadger/valsz=1024/mem=26MiB/batch=1000/sync=false: killed (OOM): anon 23.0 MiB, page cache 2.0 MiB, dirty 2.0 MiB at the kill",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if n := Rounds(*budget); n != "n=1..2" {
		t.Errorf("rounds %q: a kill's cell is no round", n)
	}
	if !strings.Contains(strings.Join(s.Columns, " "), "Badger") || budget.Columns[len(budget.Columns)-1] != "Disk" {
		t.Errorf("columns %v", budget.Columns)
	}
	var out bytes.Buffer
	if err := s.Write(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"killed (OOM): anon 20.4 MiB", "stopped at MEM_TIMEOUT", "sync=false: killed (OOM)"} {
		if !strings.Contains(text, want) {
			t.Errorf("printed summary lacks %q:\n%s", want, text)
		}
	}
	t.Logf("\n%s", text)
}

// TestOnlyKillsIsASummary: a results file whose every benchmark was
// killed still has a summary, saying so.
func TestOnlyKillsIsASummary(t *testing.T) {
	in := "[kvbench-kill] BenchmarkReadRandomBadger/valsz=1024/mem=26MiB/cache=warm/hit=100%/threads=1 cause=stopped limit=27262976 anon=1048576 file=2097152 dirty=0\n"
	out := summaryOf(t, in)
	if want := "stopped (a signal or a crash): anon 1.0 MiB, page cache 2.0 MiB, dirty 0 B at the end"; !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
}
