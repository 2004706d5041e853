package summary

import (
	"strings"
	"testing"
)

// A note that applies to several tables is printed under the first one
// only; each table's other notes stay under it.
func TestNoteSaidOnce(t *testing.T) {
	row := []Row{{Label: "ops/s", Cells: map[string]Cell{}}}
	s := &Summary{Results: &Results{Name: "f.txt"}, Tables: []Table{
		{Title: "A", Columns: []string{"Bolt"}, Rows: row, Notes: []string{"shared note", "only A"}},
		{Title: "B", Columns: []string{"Bolt"}, Rows: row, Notes: []string{"shared note", "only B"}},
	}}
	var b strings.Builder
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "shared note"); n != 1 {
		t.Errorf("shared note printed %d times:\n%s", n, out)
	}
	if a, sh, bb := strings.Index(out, "== A"), strings.Index(out, "shared note"), strings.Index(out, "== B"); !(a < sh && sh < bb) {
		t.Errorf("shared note not under the first table:\n%s", out)
	}
	for _, n := range []string{"only A", "only B"} {
		if !strings.Contains(out, n) {
			t.Errorf("%q missing:\n%s", n, out)
		}
	}
}
