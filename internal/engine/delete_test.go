package engine_test

import (
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// TestDelete: every engine deletes a key durably (it stays gone after a
// reopen), leaves the others, and takes a missing key without complaint.
func TestDelete(t *testing.T) {
	eachEngine(t, nil, func(t *testing.T, info engine.Info) {
		o := testOptions(t.TempDir())
		db := open(t, info.Name, o)
		put(t, db, "a", "1", "b", "2")
		r, _ := db.NewReader()
		if _, found := mustGet(t, r, "a"); !found {
			t.Fatal("a missing before delete")
		}
		r.Close()
		if err := engine.Delete(db, []byte("a")); err != nil {
			t.Fatal(err)
		}
		if err := engine.Delete(db, []byte("never-written")); err != nil {
			t.Fatalf("deleting a missing key: %v", err)
		}
		check := func(db engine.DB) {
			r := reader(t, db)
			defer r.Close()
			if _, found := mustGet(t, r, "a"); found {
				t.Error("a found after delete")
			}
			if v, found := mustGet(t, r, "b"); !found || v != "2" {
				t.Errorf("b = %q, %v after deleting a", v, found)
			}
		}
		check(db)
		if info.Reference {
			db.Close()
			return
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = open(t, info.Name, o)
		defer db.Close()
		check(db)
	})
}
