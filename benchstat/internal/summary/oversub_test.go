package summary

import (
	"strings"
	"testing"
)

// TestOversubscribedRowsAreNoted: a row whose threads exceed the run's
// CPUs gets a note, once per thread count; rows within them do not.
func TestOversubscribedRowsAreNoted(t *testing.T) {
	r := &Results{Run: map[string]string{"cpus": "2"}}
	tb := Table{Rows: []Row{{Label: "ops/s threads=1"}, {Label: "ops/s threads=2"}, {Label: "ops/s block=4KiB threads=16"}, {Label: "p99 µs threads=16"}}}
	notes := oversubscribed(r, tb)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "threads=16: 8× the run's 2 CPUs") {
		t.Fatalf("notes %q", notes)
	}
	if notes := oversubscribed(r, Table{Common: "threads=4"}); len(notes) != 1 || !strings.HasPrefix(notes[0], "threads=4: 2×") {
		t.Fatalf("a thread count said once: %q", notes)
	}
	if notes := oversubscribed(&Results{Run: map[string]string{}}, tb); notes != nil {
		t.Fatalf("no cpus line, yet %q", notes)
	}
}
