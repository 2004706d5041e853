package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/flagreg"
)

// testOptions leaves every engine option at its declared default
// (engine.Open fills them in). Badger's default value threshold, 1 MiB,
// must fit in its largest batch, 15% of the memtable, which takes a
// memtable of at least 7 MiB.
// eachEngine runs fn as a subtest of every registered engine that keep
// admits (nil: every one); an engine not compiled in skips.
func eachEngine(t *testing.T, keep func(engine.Info) bool, fn func(t *testing.T, info engine.Info)) {
	for _, info := range engine.All() {
		if keep == nil || keep(info) {
			t.Run(info.Name, func(t *testing.T) {
				if info.Missing != "" {
					t.Skip(info.Missing)
				}
				fn(t, info)
			})
		}
	}
}

// open opens engine name with o, or fails t.
func open(t *testing.T, name string, o engine.Options) engine.DB {
	t.Helper()
	db, err := engine.Open(name, o)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// reader is a new reader of db, or fails t.
func reader(t *testing.T, db engine.DB) engine.Reader {
	t.Helper()
	r, err := db.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testOptions(dir string) engine.Options {
	return engine.Options{
		Dir: dir, CacheMB: 8, MemtableMB: 8, Compression: "none",
		BloomBitsPerKey: 10, ExpectedBytes: 1 << 20,
	}
}

// extraValues are engine option values outside their Choices that reach
// code the defaults never do: with a 64-byte threshold most values of the
// conformance data go to Badger's value log (the default, 1 MiB, keeps
// them all in its tree); 1 KiB index blocks give Pebble's tables
// two-level indexes.
var extraValues = map[string][]string{"badger_vthreshold": {"64"}, "pebble_index_block": {"1KiB"}}

// variant is one set of engine options conformance runs an engine under.
type variant struct {
	name      string
	params    map[string]string
	readahead string // Options.Readahead; "" is off
}

// variants are the engine's declared defaults (engine.Open fills them in),
// then OS readahead, then each other choice of each of its options alone,
// then extraValues.
func variants(info engine.Info) []variant {
	out := []variant{{name: "defaults"}, {name: "readahead=os", readahead: engine.ReadaheadOS}}
	for _, p := range info.Params {
		name := p.FlagName()
		vals := append(p.ChoiceTexts(), extraValues[name]...)
		for _, v := range vals {
			if v != flagreg.Text(p) {
				out = append(out, variant{name: name + "=" + v, params: map[string]string{name: v}})
			}
		}
	}
	return out
}

func TestConformance(t *testing.T) {
	if len(engine.All()) < 2 {
		t.Fatalf("only %v registered", engine.Names())
	}
	eachEngine(t, nil, func(t *testing.T, info engine.Info) {
		for _, v := range variants(info) {
			t.Run(v.name, func(t *testing.T) {
				o := testOptions(t.TempDir())
				o.Readahead = v.readahead
				for k, x := range v.params {
					o = o.WithParam(k, x)
				}
				conform(t, info, o)
			})
		}
	})
}

// TestExtraValuesDeclared: every option extraValues names is some
// engine's, and its values pass the option's own check, so a renamed
// option cannot silently drop out of conformance.
func TestExtraValuesDeclared(t *testing.T) {
	for name, vals := range extraValues {
		found := false
		for _, info := range engine.All() {
			for _, p := range info.Params {
				if p.FlagName() != name {
					continue
				}
				found = true
				for _, v := range vals {
					if err := engine.CheckParam(p, v); err != nil {
						t.Errorf("%s: %s=%q: %v", info.Name, name, v, err)
					}
				}
			}
		}
		if !found {
			t.Errorf("no engine has the option %s", name)
		}
	}
}

// TestDeclarations checks what every engine declares about itself: names
// and titles unique, options that are unique flags with defaults their own
// check accepts, and dimensions with values and the workloads that sweep
// them.
// checked: an option says what it accepts, by Choices or a Check.
func checked(p engine.Param) bool {
	switch f := p.(type) {
	case *engine.Flag[engine.Text]:
		return f.Choices != nil || f.Check != nil
	case *engine.Flag[engine.Switch]:
		return f.Choices != nil || f.Check != nil
	}
	return false
}

func TestDeclarations(t *testing.T) {
	titles, params := map[string]string{}, map[string]string{}
	for _, info := range engine.All() {
		if info.Name == "" || info.Title == "" || info.Module == "" {
			t.Errorf("%q: Name, Title and Module must all be set: %+v", info.Name, info)
		}
		if prev, dup := titles[info.Title]; dup {
			t.Errorf("%s and %s share the title %s", prev, info.Name, info.Title)
		}
		titles[info.Title] = info.Name
		if (info.Missing == "") == (info.Open == nil) {
			t.Errorf("%s: Open must be set exactly when Missing is not (Missing=%q)", info.Name, info.Missing)
		}
		for _, p := range info.Params {
			name := p.FlagName()
			if name == "" {
				t.Errorf("%s: an option without a name", info.Name)
			}
			if prev, dup := params[name]; dup {
				t.Errorf("option %s declared by both %s and %s: it is one flag", name, prev, info.Name)
			}
			params[name] = info.Name
			if !checked(p) {
				t.Errorf("%s: option %s has neither Choices nor Check", info.Name, name)
			}
			if err := engine.CheckParam(p, flagreg.Text(p)); err != nil {
				t.Errorf("%s: option %s: default %q fails its own check: %v", info.Name, name, flagreg.Text(p), err)
			}
		}
		for _, d := range info.Dims {
			if d.Name == "" {
				t.Errorf("%s: a dimension without a name", info.Name)
			}
			if len(d.Values) == 0 {
				t.Errorf("%s: dimension %s has no values", info.Name, d.Name)
			}
			for _, v := range d.Values {
				if v == "" {
					t.Errorf("%s: dimension %s has an empty value", info.Name, d.Name)
				}
			}
			if !slices.Contains(engine.Capabilities, d.Is) {
				t.Errorf("%s: dimension %s is %q, none of engine.Capabilities", info.Name, d.Name, d.Is)
			}
		}
	}
}

func mustGet(t *testing.T, r engine.Reader, k string) (string, bool) {
	t.Helper()
	var got string
	found, err := r.Get([]byte(k), func(v []byte) error { got = string(v); return nil })
	if err != nil {
		t.Fatalf("Get(%q): %v", k, err)
	}
	return got, found
}

func put(t *testing.T, db engine.DB, kv ...string) {
	t.Helper()
	b := db.NewBatch()
	for i := 0; i < len(kv); i += 2 {
		if err := b.Set([]byte(kv[i]), []byte(kv[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if b.Len() != len(kv)/2 {
		t.Fatalf("Len = %d, want %d", b.Len(), len(kv)/2)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
}

func scan(t *testing.T, r engine.Reader, o engine.IterOptions) []string {
	t.Helper()
	it, err := r.NewIter(o)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for ; it.Valid(); it.Next() {
		k := string(it.Key())
		if o.KeysOnly {
			out = append(out, k)
			continue
		}
		v, err := it.Value()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k+"="+string(v))
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func conform(t *testing.T, info engine.Info, o engine.Options) {
	db := open(t, info.Name, o)
	if db.Name() != info.Name {
		t.Fatalf("Name() = %q, registered as %q", db.Name(), info.Name)
	}
	if len(db.Settings()) == 0 {
		t.Fatal("Settings() is empty: an adapter must say what it set")
	}

	// put/get, missing key, overwrite, batch
	put(t, db, "b", "2", "a", "1", "c", "3")
	put(t, db, "b", "22")
	var kv []string
	for i := 0; i < 500; i++ {
		kv = append(kv, fmt.Sprintf("p/%04d", i), strings.Repeat("v", i%200))
	}
	put(t, db, kv...)

	r := reader(t, db)
	if v, ok := mustGet(t, r, "a"); !ok || v != "1" {
		t.Fatalf("a = %q,%v", v, ok)
	}
	if v, ok := mustGet(t, r, "b"); !ok || v != "22" {
		t.Fatalf("overwrite: b = %q,%v", v, ok)
	}
	if _, ok := mustGet(t, r, "zz"); ok {
		t.Fatal("missing key found")
	}
	if _, ok := mustGet(t, r, "p/"); ok {
		t.Fatal("prefix of a key found as a key")
	}
	if v, ok := mustGet(t, r, "p/0199"); !ok || v != strings.Repeat("v", 199) {
		t.Fatalf("p/0199 = %d bytes, %v", len(v), ok)
	}
	// fn's error comes back from Get
	sentinel := fmt.Errorf("sentinel")
	if _, err := r.Get([]byte("a"), func([]byte) error { return sentinel }); err != sentinel {
		t.Fatalf("Get did not return fn's error: %v", err)
	}

	// ordered iteration, bounds, keys-only
	all := scan(t, r, engine.IterOptions{KeysOnly: true})
	if len(all) != 503 || all[0] != "a" || all[1] != "b" || all[2] != "c" || all[3] != "p/0000" || all[502] != "p/0499" {
		t.Fatalf("full scan: %d keys, first %v", len(all), all[:4])
	}
	if got := scan(t, r, engine.IterOptions{Start: []byte("b"), End: []byte("p/0001")}); strings.Join(got, ",") != "b=22,c=3,p/0000=" {
		t.Fatalf("bounded scan = %v", got)
	}
	if got := scan(t, r, engine.IterOptions{Prefix: []byte("p/01")}); len(got) != 100 || got[0] != "p/0100="+strings.Repeat("v", 100) {
		t.Fatalf("prefix scan: %d entries, first %.20q", len(got), got)
	}
	if got := scan(t, r, engine.IterOptions{Start: []byte("p/0150"), Prefix: []byte("p/01"), KeysOnly: true}); len(got) != 50 || got[0] != "p/0150" {
		t.Fatalf("prefix scan from start: %d keys", len(got))
	}
	// Prefetch and readahead change how values are read, never which.
	want := strings.Join(scan(t, r, engine.IterOptions{Start: []byte("c")}), ",")
	for _, o := range []engine.IterOptions{
		{Start: []byte("c"), NoPrefetch: true},
		{Start: []byte("c"), ReadaheadBytes: 256 << 10},
		{Start: []byte("c"), NoPrefetch: true, ReadaheadBytes: 4096},
	} {
		if got := strings.Join(scan(t, r, o), ","); got != want {
			t.Fatalf("scan with %+v differs from a plain scan", o)
		}
	}
	if got := scan(t, r, engine.IterOptions{Prefix: []byte("p/01"), NoPrefetch: true}); len(got) != 100 || got[99] != "p/0199="+strings.Repeat("v", 199) {
		t.Fatalf("prefix scan without prefetch: %d entries", len(got))
	}
	if got := scan(t, r, engine.IterOptions{Prefix: []byte("q")}); len(got) != 0 {
		t.Fatalf("empty prefix scan = %v", got)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second reader Close: %v", err)
	}

	// a reader made after a commit sees it
	put(t, db, "d", "4")
	r2, err := db.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := mustGet(t, r2, "d"); !ok || v != "4" {
		t.Fatalf("d = %q,%v", v, ok)
	}
	r2.Close()

	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if sz, err := db.Size(); err != nil || sz <= 0 {
		t.Fatalf("Size = %d, %v", sz, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if info.Reference {
		return // the rail keeps nothing across a close
	}

	// data survives close and reopen, read-only
	o.ReadOnly = true
	db, err = engine.Open(info.Name, o)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	r, err = db.NewReader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for k, want := range map[string]string{"a": "1", "b": "22", "d": "4", "p/0499": strings.Repeat("v", 499%200)} {
		if v, ok := mustGet(t, r, k); !ok || v != want {
			t.Fatalf("after reopen %s = %q,%v", k, v, ok)
		}
	}
	if n := len(scan(t, r, engine.IterOptions{})); n != 504 {
		t.Fatalf("after reopen: %d keys, want 504", n)
	}
}

func TestCompressionValidated(t *testing.T) {
	for _, info := range engine.All() {
		if err := info.CheckCompression("lz77-bogus"); err == nil {
			t.Errorf("%s accepted a bogus compression", info.Name)
		}
		if err := info.CheckCompression("none"); err != nil {
			t.Errorf("%s: %v", info.Name, err)
		}
	}
}

func TestInfoVersionMatchesDB(t *testing.T) {
	for _, info := range engine.All() {
		if info.Reference || info.Missing != "" {
			continue
		}
		if info.Version == nil || strings.Contains(info.Version(), "unknown") || !strings.HasPrefix(info.Version(), info.Module+" v") {
			t.Errorf("%s: Info.Version() = %q", info.Name, info.Version())
		}
	}
}

func TestDirSizeToleratesVanishingFiles(t *testing.T) {
	dir := t.TempDir()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // create and delete files while DirSize walks, as compactions do
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := filepath.Join(dir, fmt.Sprintf("%06d.sst", i%50))
			os.WriteFile(p, make([]byte, 4096), 0o644)
			os.Remove(filepath.Join(dir, fmt.Sprintf("%06d.sst", (i+25)%50)))
		}
	}()
	for i := 0; i < 300; i++ {
		if _, err := engine.DirSize(dir); err != nil {
			close(stop)
			<-done
			t.Fatalf("DirSize failed while files come and go: %v", err)
		}
	}
	close(stop)
	<-done
}
