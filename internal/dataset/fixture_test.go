package dataset

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func params() Params {
	return Params{Engine: "x", Keys: 10, ValueSize: 4, Seed: 1, ValueRatio: 1, Compression: "none", FormatVersion: FormatVersion}
}

func okBuild(calls *int) Builder {
	return func(dir string) (Manifest, error) {
		*calls++
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return Manifest{}, err
		}
		os.WriteFile(filepath.Join(dir, "data"), []byte("payload"), 0o644)
		return Manifest{EngineVersion: "x v1", KeyCount: 10, LogicalBytes: 200, DiskBytes: 7, Settled: "flushed"}, nil
	}
}

func nolog(string, ...any) {}

func TestEnsureBuildsOnceAndReuses(t *testing.T) {
	r, err := OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	d1, m, err := r.Ensure(params(), okBuild(&calls), nolog)
	if err != nil || m.KeyCount != 10 {
		t.Fatal(err)
	}
	d2, _, err := r.Ensure(params(), okBuild(&calls), nolog)
	if err != nil || d1 != d2 || calls != 1 {
		t.Fatalf("second Ensure rebuilt: calls=%d err=%v", calls, err)
	}
	p := params()
	p.ValueSize = 5
	d3, _, err := r.Ensure(p, okBuild(&calls), nolog)
	if err != nil || d3 == d1 || calls != 2 {
		t.Fatalf("other params reused a fixture: %s %s", d1, d3)
	}
}

func TestEnsureRebuildsHalfBuilt(t *testing.T) {
	r, _ := OpenRoot(t.TempDir())
	dir := r.Sub("fixtures", params().Name())
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "partial"), []byte("x"), 0o644)
	calls := 0
	_, _, err := r.Ensure(params(), okBuild(&calls), nolog)
	if err != nil || calls != 1 {
		t.Fatalf("half-built fixture not rebuilt: calls=%d %v", calls, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "partial")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("leftover of the killed build survived the rebuild")
	}
	// A manifest for other params is not trusted either.
	m, _ := ReadManifest(dir)
	m.KeyCount = 9
	writeManifest(dir, m)
	if _, _, err := r.Ensure(params(), okBuild(&calls), nolog); err != nil || calls != 2 {
		t.Fatalf("incomplete manifest trusted: calls=%d", calls)
	}
}

func TestEnsureFailedBuildLeavesNoReady(t *testing.T) {
	r, _ := OpenRoot(t.TempDir())
	_, _, err := r.Ensure(params(), func(dir string) (Manifest, error) {
		os.MkdirAll(dir, 0o755)
		return Manifest{}, errors.New("disk full")
	}, nolog)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if _, err := ReadManifest(r.Sub("fixtures", params().Name())); err == nil {
		t.Fatal("failed build marked ready")
	}
}

func TestForeignDirectoryRefused(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, OwnedName), 0o755)
	precious := filepath.Join(dir, OwnedName, "precious")
	os.WriteFile(precious, []byte("mine"), 0o644)
	if _, err := OpenRoot(dir); err == nil || !strings.Contains(err.Error(), "not created by kvbench") {
		t.Fatalf("OpenRoot on a foreign directory: %v", err)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "mine" {
		t.Fatal("foreign file touched")
	}
}

func TestRemoveAllStaysInside(t *testing.T) {
	dir := t.TempDir()
	r, _ := OpenRoot(dir)
	outside := filepath.Join(dir, "users-data")
	os.WriteFile(outside, []byte("x"), 0o644)
	for _, p := range []string{outside, dir, r.Path, r.Sub(".."), r.Sub("..", "users-data"), "/"} {
		if err := r.RemoveAll(p); err == nil {
			t.Fatalf("RemoveAll(%s) allowed", p)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal("file outside the root removed")
	}
}

// TestLockWaitsForOtherHolder: a second locker that finds the lock held
// says so and takes the lock only once its holder lets it go. The holder
// lets go only after the second locker has found the lock held (its
// "waiting for" line), however late the machine starts it: a locker that
// took the lock without waiting is seen whenever it runs.
func TestLockWaitsForOtherHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "l.lock")
	lock, err := lockFile(p, "l", nolog)
	if err != nil {
		t.Fatal(err)
	}
	var released atomic.Bool
	waiting := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		l, err := lockFile(p, "l", func(string, ...any) { waiting <- struct{}{} })
		if err == nil {
			if !released.Load() {
				err = errors.New("took the lock while its holder still held it")
			}
			l.Close()
		}
		done <- err
	}()
	select {
	case <-waiting:
	case err := <-done:
		lock.Close()
		t.Fatalf("the second locker returned without waiting for the holder (%v)", err)
	}
	// A locker that returns after saying it waits, without the lock, has
	// this long to show it; one that waits is not timed.
	time.Sleep(100 * time.Millisecond)
	released.Store(true)
	lock.Close()
	if err := <-done; err != nil {
		t.Fatalf("second locker: %v", err)
	}
}

// TestFixtureOfAnotherEngineVersionIsNotTrusted: a fixture is keyed by
// the engine version that writes it and by the batch size of its build;
// a manifest that says another version wrote the files is not trusted,
// whatever its parameters say.
func TestFixtureOfAnotherEngineVersionIsNotTrusted(t *testing.T) {
	p := params()
	p.EngineVersion, p.Batch = "x v1", 1000
	for _, other := range []func(*Params){
		func(q *Params) { q.EngineVersion = "x v2" },
		func(q *Params) { q.Batch = 500 },
	} {
		q := p
		other(&q)
		if q.Name() == p.Name() {
			t.Errorf("%+v and %+v share the directory %s", p, q, p.Name())
		}
	}
	m := Manifest{Params: p, EngineVersion: "x v1", KeyCount: p.Keys, LogicalBytes: 1, DiskBytes: 1, Settled: "flushed", Built: time.Now(), Files: []FileSum{{Name: "data", Size: 1}}}
	if !m.Complete(p) {
		t.Fatal("a manifest of this version is not trusted")
	}
	m.EngineVersion = "x v2" // built by another version than its key says
	if m.Complete(p) {
		t.Fatal("a manifest written by another engine version is trusted")
	}
}

// TestUnopenedRootWritesNothing: a Root OpenRoot did not make names no
// path in the working directory: it builds no fixture, removes nothing,
// and Sub panics.
func TestUnopenedRootWritesNothing(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	var r Root
	calls := 0
	if _, _, err := r.Ensure(params(), okBuild(&calls), nolog); err == nil || calls != 0 {
		t.Fatalf("Ensure on an unopened root: calls=%d err=%v", calls, err)
	}
	os.Mkdir("scratch", 0o755)
	if err := r.RemoveAll("scratch"); err == nil {
		t.Fatal("RemoveAll on an unopened root removed a directory of the working directory")
	}
	os.Remove("scratch")
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Sub on an unopened root returned a path")
			}
		}()
		r.Sub("scratch")
	}()
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Fatalf("the working directory holds %v", ents)
	}
}

// TestCorruptManifestIsRebuilt: a .ready that is not a manifest (cut
// short, overwritten) is not trusted: the fixture is rebuilt.
func TestCorruptManifestIsRebuilt(t *testing.T) {
	r, _ := OpenRoot(t.TempDir())
	calls := 0
	dir, _, err := r.Ensure(params(), okBuild(&calls), nolog)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ReadyName), []byte(`{"params": {"eng`), 0o644)
	var log strings.Builder
	logf := func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }
	if _, _, err := r.Ensure(params(), okBuild(&calls), logf); err != nil || calls != 2 || !strings.Contains(log.String(), "rebuilding") {
		t.Fatalf("corrupt manifest: calls=%d err=%v log=%q", calls, err, log.String())
	}
}

// TestDamagedFileIsRebuilt: a fixture file whose size or content is not
// what its build left is seen before the fixture is trusted, and the
// fixture is rebuilt, saying which file; files an engine rewrites when it
// only reads (lock files, logs) are not recorded.
func TestDamagedFileIsRebuilt(t *testing.T) {
	r, _ := OpenRoot(t.TempDir())
	calls := 0
	build := func(dir string) (Manifest, error) {
		m, err := okBuild(&calls)(dir)
		os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644)
		os.WriteFile(filepath.Join(dir, "LOG"), []byte("opened"), 0o644)
		return m, err
	}
	dir, m, err := r.Ensure(params(), build, nolog)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 1 || m.Files[0].Name != "data" || m.Files[0].Size != 7 {
		t.Fatalf("manifest files %+v, want data alone", m.Files)
	}
	os.WriteFile(filepath.Join(dir, "LOG"), []byte("opened again, read-only"), 0o644)
	for _, c := range []struct{ content, want string }{
		{"pay", "data is 3 bytes, its build left 7"},
		{"pAyload", "data has CRC-32C"},
	} {
		os.WriteFile(filepath.Join(dir, "data"), []byte(c.content), 0o644)
		var log strings.Builder
		logf := func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }
		before := calls
		if _, _, err := r.Ensure(params(), build, logf); err != nil || calls != before+1 || !strings.Contains(log.String(), "is damaged ("+c.want) {
			t.Errorf("%q: calls %d, err %v, log %q", c.content, calls-before, err, log.String())
		}
	}
	// Sizes alone for a fixture too big to read before every run; every
	// checksum with FullCheck.
	os.WriteFile(filepath.Join(dir, "data"), []byte("pAyload"), 0o644)
	if err := checkFiles(dir, []FileSum{{Name: "data", Size: 7, CRC32C: m.Files[0].CRC32C}}, false); err == nil {
		t.Fatal("a flipped byte in a small fixture passed")
	}
	os.WriteFile(filepath.Join(dir, "big"), nil, 0o644)
	os.Truncate(filepath.Join(dir, "big"), checksumAll) // sparse: nothing to read from the disk
	files := []FileSum{{Name: "data", Size: 7, CRC32C: m.Files[0].CRC32C}, {Name: "big", Size: checksumAll}}
	if err := checkFiles(dir, files, false); err != nil {
		t.Fatalf("a fixture over %d bytes had its checksums read: %v", checksumAll, err)
	}
	if err := checkFiles(dir, files, true); err == nil || !strings.Contains(err.Error(), "data has CRC-32C") {
		t.Fatalf("FullCheck: %v", err)
	}
	files[1].Size--
	if err := checkFiles(dir, files, false); err == nil || !strings.Contains(err.Error(), "big is 268435456 bytes") {
		t.Fatalf("sizes: %v", err)
	}
}

// TestOpenRootRace: runs that open a fresh -dir at once each get the
// suite's directory; none calls it foreign.
func TestOpenRootRace(t *testing.T) {
	for range 20 {
		dir := t.TempDir()
		errs := make(chan error, 8)
		for range cap(errs) {
			go func() {
				_, err := OpenRoot(dir)
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestManifestWithoutFilesIsRebuilt: a fixture an older kvbench built has
// no list of its files to check; it is rebuilt once, saying why.
func TestManifestWithoutFilesIsRebuilt(t *testing.T) {
	r, _ := OpenRoot(t.TempDir())
	calls := 0
	dir, m, err := r.Ensure(params(), okBuild(&calls), nolog)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = nil
	writeManifest(dir, m)
	var log strings.Builder
	logf := func(f string, a ...any) { fmt.Fprintf(&log, f+"\n", a...) }
	if _, m, err := r.Ensure(params(), okBuild(&calls), logf); err != nil || calls != 2 || len(m.Files) != 1 || !strings.Contains(log.String(), "an older kvbench built it") {
		t.Fatalf("calls=%d err=%v log=%q", calls, err, log.String())
	}
}

// The estimate scales the builds of the engine's fixtures: one build by
// OneSizeExponent (2,000 keys: the 1,000-key build's 2 s × 2^1.3, its 900
// bytes on disk doubled); with two sizes by the power law through the two
// nearest; another engine's build and an engine never built here give
// nothing.
func TestEstimateScalesTheNearestBuild(t *testing.T) {
	r, err := OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	built := func(engine string, keys uint64, seconds float64, disk int64) {
		p := params()
		p.Engine, p.Keys = engine, keys
		_, _, err := r.Ensure(p, func(dir string) (Manifest, error) {
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "data"), []byte("payload"), 0o644)
			return Manifest{EngineVersion: "v1", KeyCount: keys, LogicalBytes: int64(keys) * 20, DiskBytes: disk, BuildSeconds: seconds, Settled: "flushed"}, nil
		}, nolog)
		if err != nil {
			t.Fatal(err)
		}
	}
	built("x", 1000, 2, 900)
	built("y", 2000, 100, 1)
	p := params()
	est, ok := r.Estimate(p, 2000*20)
	if want := 2 * math.Pow(2, OneSizeExponent); !ok || est.From.KeyCount != 1000 || math.Abs(est.Seconds-want) > 1e-9 || est.DiskBytes != 1800 || est.Exponent != OneSizeExponent {
		t.Fatalf("estimate %+v (from %+v), ok %v; want %.2f s and 1800 bytes from the one 1,000-key build", est, est.From, ok, want)
	}
	// A second size: the time follows the power law through the two
	// nearest, 1,000 keys in 2 s and 100 keys in 0.1 s (exponent 1.30).
	built("x", 100, 0.1, 90)
	est, _ = r.Estimate(p, 10000*20)
	if k := math.Log(20) / math.Log(10); est.From.KeyCount != 1000 || math.Abs(est.Exponent-k) > 1e-9 || math.Abs(est.Seconds-2*math.Pow(10, k)) > 1e-6 {
		t.Errorf("10,000 keys: %.2f s at exponent %.3f from %d keys; want %.2f s at %.3f from 1,000", est.Seconds, est.Exponent, est.From.KeyCount, 2*math.Pow(10, k), k)
	}
	// Builds of another value size count only when there are none of
	// p's: a 100,000-key build of 8-byte values is far nearer in bytes
	// than the 1,000-key one, and is passed over.
	other := params()
	other.Keys, other.ValueSize = 100000, 8
	if _, _, err := r.Ensure(other, func(dir string) (Manifest, error) {
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "data"), []byte("payload"), 0o644)
		return Manifest{EngineVersion: "v1", KeyCount: 100000, LogicalBytes: 10000 * 20, DiskBytes: 5, BuildSeconds: 1000, Settled: "flushed"}, nil
	}, nolog); err != nil {
		t.Fatal(err)
	}
	if est, _ = r.Estimate(p, 10000*20); est.From.KeyCount != 1000 {
		t.Errorf("10,000 keys went by the %d-key build of other values", est.From.KeyCount)
	}
	// A build that grew slower than in proportion still scales in
	// proportion at least.
	built("x", 10, 0.05, 10)
	est, _ = r.Estimate(p, 20*20)
	if est.From.KeyCount != 10 || est.Exponent != 1 || math.Abs(est.Seconds-0.1) > 1e-9 {
		t.Errorf("20 keys: %.3f s at exponent %.3f from %d keys; want 0.1 s at 1 from 10", est.Seconds, est.Exponent, est.From.KeyCount)
	}
	p.Engine = "z"
	if est, ok := r.Estimate(p, 100); ok {
		t.Fatalf("an engine never built here has an estimate: %+v", est)
	}
}
