package engine_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

// randomByDefault lists the engines that memory-map their files, and
// whether their maps carry MADV_RANDOM with Readahead "os" (the engine's
// own default): bbolt advises its map itself, LMDB and Badger do not.
var randomByDefault = map[string]bool{"badger": false, "bolt": true, "lmdb": false}

// unadvised is a mapped file no data is read through, which the engine
// does not advise: LMDB's lock file (its reader table).
var unadvised = map[string]string{"lmdb": "lock.mdb"}

// smapping is one memory map of a file, from /proc/self/smaps.
type smapping struct {
	path  string
	flags []string // VmFlags
}

// random reports whether the map carries MADV_RANDOM (VmFlags "rr").
func (m smapping) random() bool {
	for _, f := range m.flags {
		if f == "rr" {
			return true
		}
	}
	return false
}

// mapsUnder lists this process's maps of files under dir.
func mapsUnder(t *testing.T, dir string) []smapping {
	t.Helper()
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	var out []smapping
	var cur *smapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			if cur != nil {
				cur.flags = strings.Fields(v)
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		// A map's first line: start-end perms offset dev inode [path].
		if fs := strings.Fields(line); len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			cur = nil
			if i := strings.Index(line, " /"); i >= 0 {
				p := strings.TrimSuffix(line[i+1:], " (deleted)")
				if strings.HasPrefix(p, root+"/") {
					cur = &smapping{path: p}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadahead opens every engine on a store with files, read-write and
// read-only, with Readahead off and os: the settings say which, and the
// memory maps of the store's files carry MADV_RANDOM exactly as they
// should (all of them with off; with os, as the engine's default is).
func TestReadahead(t *testing.T) {
	eachEngine(t, nil, func(t *testing.T, info engine.Info) {
		dir := t.TempDir()
		// Write and close, so the store has tables and data to map.
		db := open(t, info.Name, testOptions(dir))
		var kv []string
		for i := 0; i < 2000; i++ {
			kv = append(kv, fmt.Sprintf("k/%05d", i), strings.Repeat("v", 300))
		}
		put(t, db, kv...)
		if err := db.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		for _, mode := range engine.ReadaheadModes {
			for _, ro := range []bool{false, true} {
				t.Run(fmt.Sprintf("readahead=%s/readonly=%v", mode, ro), func(t *testing.T) {
					o := testOptions(dir)
					o.Readahead, o.ReadOnly = mode, ro
					if info.Reference {
						o.Dir = t.TempDir()
					}
					db := open(t, info.Name, o)
					defer db.Close()
					checkReadaheadSetting(t, info, db.Settings(), mode)
					if info.Reference {
						return
					}
					r := reader(t, db)
					if v, ok := mustGet(t, r, "k/01234"); !ok || len(v) != 300 {
						t.Fatalf("k/01234 = %d bytes, %v", len(v), ok)
					}
					checkMaps(t, info, mapsUnder(t, dir), mode)
					if err := r.Close(); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	})
}

// checkReadaheadSetting: one readahead setting, naming the mode (the rail
// says it has nothing to read ahead).
func checkReadaheadSetting(t *testing.T, info engine.Info, s []engine.Setting, mode string) {
	t.Helper()
	var got []string
	for _, kv := range s {
		if kv.Key == "readahead" {
			got = append(got, kv.Value)
		}
	}
	want := mode + " ("
	if info.Reference {
		want = "n/a"
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Fatalf("readahead settings %q, want one starting %q", got, want)
	}
}

// checkMaps: the engines that map files map some of the store's, each
// advised as it should be; the others map none.
func checkMaps(t *testing.T, info engine.Info, maps []smapping, mode string) {
	t.Helper()
	byDefault, mapper := randomByDefault[info.Name]
	if !mapper {
		if len(maps) > 0 {
			t.Fatalf("%d maps of the store's files (%s ...), and no word on how %s advises them", len(maps), maps[0].path, info.Name)
		}
		return
	}
	want := mode == engine.ReadaheadOff || byDefault
	var checked []string
	for _, m := range maps {
		if filepath.Base(m.path) == unadvised[info.Name] {
			continue
		}
		checked = append(checked, filepath.Base(m.path))
		if m.random() != want {
			t.Errorf("map of %s: VmFlags %v, MADV_RANDOM (rr) %v, want %v", m.path, m.flags, m.random(), want)
		}
	}
	if len(checked) == 0 {
		t.Fatalf("no map of the store's data files (maps: %v)", maps)
	}
	t.Logf("maps of %s: MADV_RANDOM %v", strings.Join(checked, " "), want)
}

// TestReadaheadValidated: a readahead mode other than off and os is an
// error, naming it, before anything is opened.
func TestReadaheadValidated(t *testing.T) {
	for _, info := range engine.All() {
		if info.Missing != "" {
			continue
		}
		o := testOptions(filepath.Join(t.TempDir(), "store"))
		o.Readahead = "on"
		if db, err := engine.Open(info.Name, o); err == nil || !strings.Contains(err.Error(), `readahead "on"`) {
			if db != nil {
				db.Close()
			}
			t.Errorf("%s: Open with readahead \"on\": %v", info.Name, err)
		}
		if _, err := os.Stat(o.Dir); err == nil {
			t.Errorf("%s: a rejected open created %s", info.Name, o.Dir)
		}
	}
}
