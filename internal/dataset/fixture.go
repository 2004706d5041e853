package dataset

import (
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReadyName is the manifest that marks a fixture complete. A fixture
// directory without it was left by a build that did not finish.
const ReadyName = ".ready"

// Params is everything that shapes a fixture's bytes on disk.
type Params struct {
	Engine        string            `json:"engine"`
	Keys          uint64            `json:"keys"`
	ValueSize     int               `json:"value_size"`
	Seed          uint64            `json:"seed"`
	ValueRatio    float64           `json:"value_ratio"`
	Compression   string            `json:"compression"`
	FormatVersion int               `json:"format_version"`
	Layout        map[string]string `json:"layout,omitempty"` // engine options that change the files (bloom bits, memtable, ...)
	// EngineVersion is the code that writes the files (the binding's module
	// version, and any library it links at run time): another version may lay
	// the data out otherwise. "" for files no engine writes.
	EngineVersion string `json:"engine_version,omitempty"`
	// Batch is the keys per committed batch of the build (-batch), which a
	// B-tree's splits and an LSM's flushes follow; 0 when not in batches.
	Batch int `json:"batch,omitempty"`
}

// Manifest is the content of .ready.
type Manifest struct {
	Params        Params    `json:"params"`
	EngineVersion string    `json:"engine_version"`
	KeyCount      uint64    `json:"key_count"`
	LogicalBytes  int64     `json:"logical_bytes"`
	DiskBytes     int64     `json:"disk_bytes"`
	BuildSeconds  float64   `json:"build_seconds"`
	Settled       string    `json:"settled"` // how the build made the files final (flush, compactions)
	Built         time.Time `json:"built"`
	// Files are the fixture's files as its build left them, but the
	// Volatile ones; Ensure checks them before trusting the fixture.
	Files []FileSum `json:"files"`
}

// FileSum is one file of a fixture: its path in it, size and CRC-32C.
type FileSum struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	CRC32C uint32 `json:"crc32c"`
}

// Complete reports whether m describes a finished build of p, by the
// engine version p names.
func (m *Manifest) Complete(p Params) bool {
	return reflect.DeepEqual(m.Params, p) && m.EngineVersion != "" && m.KeyCount == p.Keys &&
		(p.EngineVersion == "" || m.EngineVersion == p.EngineVersion) &&
		m.LogicalBytes > 0 && m.DiskBytes > 0 && m.Settled != "" && !m.Built.IsZero() && len(m.Files) > 0
}

// Name is the fixture's directory name: readable, and unique per Params,
// the engine version as a short hash (so that fixtures of two versions live
// side by side).
func (p Params) Name() string {
	n := fmt.Sprintf("%s-k%d-v%d-s%d-r%g-c%s-f%d", p.Engine, p.Keys, p.ValueSize, p.Seed, p.ValueRatio, p.Compression, p.FormatVersion)
	if p.Batch > 0 {
		n += fmt.Sprintf("-batch%d", p.Batch)
	}
	if p.EngineVersion != "" {
		sum := sha256.Sum256([]byte(p.EngineVersion))
		n += fmt.Sprintf("-ver%x", sum[:4])
	}
	for _, k := range slices.Sorted(maps.Keys(p.Layout)) {
		n += "-" + k + p.Layout[k]
	}
	return n
}

// Builder writes a fixture into dir and returns its manifest without
// Params and Built, which Ensure fills in.
type Builder func(dir string) (Manifest, error)

// Ensure returns the directory of a complete fixture for p, building it
// first when it is missing, half-built, built from other parameters, or
// damaged (a file's size or checksum not what its build left). It holds the
// fixture's lock until the process exits: another run that needs it (some
// engines lock their files even to read) waits, saying who holds it.
func (r Root) Ensure(p Params, build Builder, logf func(format string, args ...any)) (string, *Manifest, error) {
	if !r.IsOpen() {
		return "", nil, errNotOpen
	}
	fixtures := r.Sub("fixtures")
	if err := os.MkdirAll(fixtures, 0o755); err != nil {
		return "", nil, err
	}
	dir := filepath.Join(fixtures, p.Name())
	if err := holdLock(dir+".lock", "fixture "+p.Name(), logf); err != nil {
		return "", nil, err
	}

	m, err := ReadManifest(dir)
	switch {
	case err == nil && m.Complete(p):
		if err = checkFiles(dir, m.Files, r.FullCheck); err == nil {
			return dir, m, nil
		}
		logf("fixture %s is damaged (%v); rebuilding", p.Name(), err)
	case err == nil && len(m.Files) == 0:
		logf("fixture %s has no list of its files to check (an older kvbench built it); rebuilding", p.Name())
	default:
		if _, err := os.Stat(dir); err == nil {
			logf("fixture %s is incomplete or stale; rebuilding", p.Name())
		}
	}
	if _, err := os.Stat(dir); err == nil {
		if err := r.RemoveAll(dir); err != nil {
			return "", nil, err
		}
	}
	start := time.Now()
	built, err := build(dir)
	if err != nil {
		return "", nil, fmt.Errorf("building fixture %s: %w", p.Name(), err)
	}
	m = &built
	m.Params = p
	m.Built = time.Now().UTC()
	if m.BuildSeconds == 0 {
		m.BuildSeconds = time.Since(start).Seconds()
	}
	if m.Files, err = sumFiles(dir); err != nil {
		return "", nil, fmt.Errorf("building fixture %s: %w", p.Name(), err)
	}
	if !m.Complete(p) {
		return "", nil, fmt.Errorf("building fixture %s: builder returned an incomplete manifest %+v", p.Name(), *m)
	}
	if err := writeManifest(dir, m); err != nil {
		return "", nil, err
	}
	return dir, m, nil
}

// Estimate is what building a fixture should take, from this machine's
// builds of the same engine: From, the nearest in size, and Exponent, how
// time grows with the data (time ∝ size^Exponent).
type Estimate struct {
	Seconds   float64
	DiskBytes int64
	From      *Manifest
	Exponent  float64
}

// OneSizeExponent is how a build's time grows with its data when one size
// was built to go by. On a 2-vCPU VM, builds of 1M and 10M keys of 256 B
// grew as size^1.17 (bbolt) to size^1.59 (Badger); in proportion, four of
// six engines' estimates were 2.3 to 3.8 times low.
const OneSizeExponent = 1.3

// Estimate scales the builds of p's engine under r to logical bytes, those
// of p's value size if any (a B-tree's cost follows its keys, an LSM's its
// bytes). Time grows faster than size (caches outgrown, levels gained): by
// the power law through the two builds nearest in ratio, its exponent held
// to [1, 2], or by OneSizeExponent with one size built. Disk bytes are in
// proportion to the nearest build's. ok is false without a build here.
func (r Root) Estimate(p Params, logical int64) (est Estimate, ok bool) {
	dirs, _ := filepath.Glob(filepath.Join(r.Sub("fixtures"), p.Engine+"-*"))
	var builds, same []*Manifest
	for _, dir := range dirs {
		m, err := ReadManifest(dir)
		if err != nil || m.Params.Engine != p.Engine || m.BuildSeconds <= 0 || m.LogicalBytes <= 0 {
			continue
		}
		builds = append(builds, m)
		if m.Params.ValueSize == p.ValueSize {
			same = append(same, m)
		}
	}
	if len(same) > 0 {
		builds = same
	}
	if len(builds) == 0 {
		return est, false
	}
	dist := func(m *Manifest) float64 { return math.Abs(math.Log(float64(m.LogicalBytes) / float64(logical))) }
	slices.SortFunc(builds, func(a, b *Manifest) int { return cmp.Compare(dist(a), dist(b)) })
	near := builds[0]
	est.From, est.Exponent = near, OneSizeExponent
	for _, m := range builds[1:] {
		if m.LogicalBytes != near.LogicalBytes {
			k := math.Log(m.BuildSeconds/near.BuildSeconds) / math.Log(float64(m.LogicalBytes)/float64(near.LogicalBytes))
			est.Exponent = min(max(k, 1), 2)
			break
		}
	}
	scale := float64(logical) / float64(near.LogicalBytes)
	est.Seconds = near.BuildSeconds * math.Pow(scale, est.Exponent)
	est.DiskBytes = int64(float64(near.DiskBytes) * scale)
	return est, true
}

// ReadManifest reads dir's .ready.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ReadyName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// writeManifest makes .ready appear atomically and durably, after the data.
func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ReadyName+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if err = cmp.Or(err, f.Close()); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, ReadyName)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// lockFile takes an exclusive flock on path and writes into it which process
// holds it, saying what it waits for and who holds it when it must wait.
// Closing the file, or the process's death, drops the lock.
func lockFile(path, what string, logf func(string, ...any)) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		holder, _ := os.ReadFile(path)
		h := cmp.Or(strings.TrimSpace(string(holder)), "another process")
		logf("waiting for %s: %s is using it (one run at a time reads or builds a fixture; docs/fixtures.md#two-runs-at-once)", what, h)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	comm, _ := os.ReadFile("/proc/self/comm")
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "process %d (%s), since %s\n", os.Getpid(), strings.TrimSpace(string(comm)), time.Now().Format(time.TimeOnly))
	}
	return f, nil
}

// held are the locks this process holds until it exits, their open files
// by path (kept from being collected).
var held = struct {
	sync.Mutex
	m map[string]*os.File
}{m: map[string]*os.File{}}

// holdLock takes path's lock (lockFile) for the rest of the process,
// unless this process holds it already.
func holdLock(path, what string, logf func(string, ...any)) error {
	held.Lock()
	defer held.Unlock()
	if held.m[path] != nil {
		return nil
	}
	f, err := lockFile(path, what, logf)
	if err == nil {
		held.m[path] = f
	}
	return err
}

// checksumAll is the largest fixture whose checksums Ensure verifies on
// every run (a fraction of a second); larger ones by size, or FullCheck.
const checksumAll = 256 << 20

// Volatile reports whether a fixture's file is one the manifest does not
// record: the manifest, or one an engine writes even opening read-only
// (locks, info logs).
func Volatile(name string) bool {
	base := filepath.Base(name)
	for _, pat := range []string{ReadyName + "*", "LOCK", "LOG", "LOG.old.*", "lock.mdb", "*.lock"} {
		if ok, _ := filepath.Match(pat, base); ok {
			return true
		}
	}
	return false
}

// sumFiles lists every regular file under dir but the volatile ones, with
// its size and CRC-32C.
func sumFiles(dir string) ([]FileSum, error) {
	var files []FileSum
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || Volatile(rel) {
			return err
		}
		sum, size, err := crcFile(p)
		if err != nil {
			return err
		}
		files = append(files, FileSum{Name: rel, Size: size, CRC32C: sum})
		return nil
	})
	return files, err
}

// checkFiles compares the files under dir with what their build left: their
// sizes, and checksums when full or the fixture is small enough.
func checkFiles(dir string, files []FileSum, full bool) error {
	var total int64
	for _, f := range files {
		fi, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
		if fi.Size() != f.Size {
			return fmt.Errorf("%s is %d bytes, its build left %d", f.Name, fi.Size(), f.Size)
		}
		total += f.Size
	}
	if !full && total > checksumAll {
		return nil
	}
	for _, f := range files {
		sum, _, err := crcFile(filepath.Join(dir, f.Name))
		if err != nil {
			return err
		}
		if sum != f.CRC32C {
			return fmt.Errorf("%s has CRC-32C %08x, its build left %08x", f.Name, sum, f.CRC32C)
		}
	}
	return nil
}

// crcFile returns the CRC-32C and size of the file at p.
func crcFile(p string) (uint32, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	n, err := io.Copy(h, f)
	return h.Sum32(), n, err
}
