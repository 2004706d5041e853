package engine_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// settingValue is the value of key in an engine's settings ("" if absent).
func settingValue(s []engine.Setting, key string) string {
	for _, kv := range s {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// TestChecksumsAsSettingsSay flips one byte of a stored value in the
// store's files and reads the key back from a fresh read-only open, with
// SkipChecksums off and on. What the read returns must be what the
// settings line says the engine does: an engine whose verify_checksums
// is true never hands out the damaged value (RocksDB and Pebble fail the
// read; Badger's Get treats a table block that fails verification as
// holding no key, and a value-log entry that fails as an empty value);
// one that says false, or checksums=none, returns it.
func TestChecksumsAsSettingsSay(t *testing.T) {
	const keys, victim = 2000, 1234
	g, err := dataset.New(dataset.Spec{Keys: keys, ValueSize: 128, ValueRatio: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	type store struct {
		name, engine string
		params       map[string]string
		data         func(name string) bool // the files that hold the values
	}
	stores := []store{{name: "badger/vlog", engine: "badger",
		params: map[string]string{"badger_vthreshold": "64"}, data: func(n string) bool { return filepath.Ext(n) == ".vlog" }}}
	for _, info := range engine.All() {
		if !info.Reference {
			stores = append(stores, store{name: info.Name, engine: info.Name, data: func(n string) bool { return info.LogFile == nil || !info.LogFile(n) }})
		}
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			if info, _ := engine.Lookup(st.engine); info.Missing != "" {
				t.Skip(info.Missing)
			}
			o := testOptions(t.TempDir())
			for k, v := range st.params {
				o = o.WithParam(k, v)
			}
			engine.WriteKeysForTest(t, st.engine, o, g)
			want := g.Value(make([]byte, g.ValueSize), victim)
			if n := corrupt(t, o.Dir, want, st.data); n == 0 {
				t.Fatal("the value is in no file of the store's data")
			}
			bad := bytes.Clone(want)
			bad[len(bad)/2] ^= 0xff
			for _, skip := range []bool{false, true} {
				// A copy per open: Pebble keeps its store locked after a fatal error.
				ro := o
				ro.ReadOnly, ro.SkipChecksums, ro.Dir = true, skip, filepath.Join(t.TempDir(), "copy")
				if err := os.CopyFS(ro.Dir, os.DirFS(o.Dir)); err != nil {
					t.Fatal(err)
				}
				db := open(t, st.engine, ro)
				s := db.Settings()
				verifies := strings.HasPrefix(settingValue(s, "verify_checksums"), "true")
				none := settingValue(s, "checksums") == "none (engine has none)"
				if !verifies && !none && !strings.HasPrefix(settingValue(s, "verify_checksums"), "false") {
					t.Errorf("skip=%v: settings state neither verify_checksums nor checksums=none: %v", skip, s)
				}
				rd, err := db.NewReader()
				if err != nil {
					t.Fatal(err)
				}
				got, found, err := getRecovered(rd, g.Key(make([]byte, dataset.KeySize), victim))
				if !errors.Is(err, errFatal) { // after a fatal error the store is not closed
					rd.Close()
					db.Close()
				}
				damaged := err == nil && found && bytes.Equal(got, bad)
				if verifies && damaged {
					t.Errorf("skip=%v: settings say %q, but the damaged value was returned", skip, settingValue(s, "verify_checksums"))
				}
				if !verifies && !damaged {
					t.Errorf("skip=%v: settings say no verification, but the read gave found=%v err=%v value %q", skip, found, err, got)
				}
			}
		})
	}
}

var errFatal = errors.New("panic")

// getRecovered reads key, and turns a panic into an error: Pebble
// reports on-disk corruption through its logger's Fatalf, which the
// adapter's logger panics in.
func getRecovered(rd engine.Reader, key []byte) (v []byte, found bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", errFatal, p)
		}
	}()
	found, err = rd.Get(key, func(b []byte) error {
		v = bytes.Clone(b)
		return nil
	})
	return v, found, err
}

// corrupt flips a byte in the middle of every copy of v in the store's
// files data selects (tables, B-tree files, Badger's value log), and
// returns how many it changed. Write-ahead logs are left alone: reads do
// not go through them.
func corrupt(t *testing.T, dir string, v []byte, data func(name string) bool) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !data(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		changed := false
		for off := 0; ; {
			i := bytes.Index(b[off:], v)
			if i < 0 {
				break
			}
			b[off+i+len(v)/2] ^= 0xff
			off += i + len(v)
			n++
			changed = true
		}
		if changed {
			return os.WriteFile(path, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
