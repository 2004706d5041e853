package engine

import (
	"testing"
)

// TestBoltGetModes: by default a bbolt point read is Bucket.Get, the call
// bbolt's users make (no cursor kept); bolt_get=cursor keeps one Cursor per
// reader. Both find the same keys and miss the same ones.
func TestBoltGetModes(t *testing.T) {
	dir := t.TempDir()
	db, err := Open("bolt", Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	bt := db.NewBatch()
	for _, k := range []string{"a", "c", "e"} {
		if err := bt.Set([]byte(k), []byte("v"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bt.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"", "bucket", "cursor"} {
		o := Options{Dir: dir, ReadOnly: true}
		if mode != "" {
			o = o.WithParam("bolt_get", mode)
		}
		db, err := Open("bolt", o)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := db.NewReader()
		if err != nil {
			t.Fatal(err)
		}
		if cur := rd.(*boltReader).cur; (cur != nil) != (mode == "cursor") {
			t.Errorf("bolt_get=%q: reader keeps a cursor %v", mode, cur != nil)
		}
		for _, k := range []string{"a", "b", "c", "d", "e", "f", ""} {
			var got string
			found, err := rd.Get([]byte(k), func(v []byte) error { got = string(v); return nil })
			if want := k == "a" || k == "c" || k == "e"; err != nil || found != want || (found && got != "v"+k) {
				t.Errorf("bolt_get=%q: Get(%q) = %v %q %v", mode, k, found, got, err)
			}
		}
		rd.Close()
		db.Close()
	}
}
