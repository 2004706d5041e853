package dataset

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	// EngineVersion is the code that writes the files: the binding's Go
	// module version and any library it links at run time. Another
	// version may lay out the same data differently, so its fixture is
	// another fixture. "" for files no engine writes.
	EngineVersion string `json:"engine_version,omitempty"`
	// Batch is the keys per committed batch the build wrote (-batch): a
	// B-tree's page splits and an LSM's flushes follow the commits. 0 for
	// files not written in batches.
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
}

// Complete reports whether m describes a finished build of p, written
// by the engine version p names.
func (m *Manifest) Complete(p Params) bool {
	return reflect.DeepEqual(m.Params, p) && m.EngineVersion != "" && m.KeyCount == p.Keys &&
		(p.EngineVersion == "" || m.EngineVersion == p.EngineVersion) &&
		m.LogicalBytes > 0 && m.DiskBytes > 0 && m.Settled != "" && !m.Built.IsZero()
}

// Name is the fixture's directory name: readable, and unique per Params.
// The engine version enters as a short hash of it (the manifest holds it
// in full), so fixtures of two versions live side by side and a branch
// comparison across an engine upgrade reuses both.
func (p Params) Name() string {
	n := fmt.Sprintf("%s-k%d-v%d-s%d-r%g-c%s-f%d", p.Engine, p.Keys, p.ValueSize, p.Seed, p.ValueRatio, p.Compression, p.FormatVersion)
	if p.Batch > 0 {
		n += fmt.Sprintf("-batch%d", p.Batch)
	}
	if p.EngineVersion != "" {
		sum := sha256.Sum256([]byte(p.EngineVersion))
		n += fmt.Sprintf("-ver%x", sum[:4])
	}
	for _, k := range sortedKeys(p.Layout) {
		n += "-" + k + p.Layout[k]
	}
	return n
}

// Builder writes a fixture into dir and returns its manifest without
// Params and Built, which Ensure fills in.
type Builder func(dir string) (Manifest, error)

// Ensure returns the directory of a complete fixture for p, building it
// first when it is missing, half-built, or built from other parameters. A
// file lock keeps two runs from building the same fixture at once; the
// second waits and then reuses the first one's result.
func (r Root) Ensure(p Params, build Builder, logf func(format string, args ...any)) (string, *Manifest, error) {
	if !r.IsOpen() {
		return "", nil, errNotOpen
	}
	fixtures := r.Sub("fixtures")
	if err := os.MkdirAll(fixtures, 0o755); err != nil {
		return "", nil, err
	}
	dir := filepath.Join(fixtures, p.Name())
	unlock, err := lockFile(dir+".lock", logf)
	if err != nil {
		return "", nil, err
	}
	defer unlock()

	if m, err := ReadManifest(dir); err == nil && m.Complete(p) {
		return dir, m, nil
	}
	if _, err := os.Stat(dir); err == nil {
		logf("fixture %s is incomplete or stale; rebuilding", p.Name())
		if err := r.RemoveAll(dir); err != nil {
			return "", nil, err
		}
	}
	start := time.Now()
	m, err := build(dir)
	if err != nil {
		return "", nil, fmt.Errorf("building fixture %s: %w", p.Name(), err)
	}
	m.Params = p
	m.Built = time.Now().UTC()
	if m.BuildSeconds == 0 {
		m.BuildSeconds = time.Since(start).Seconds()
	}
	if !m.Complete(p) {
		return "", nil, fmt.Errorf("building fixture %s: builder returned an incomplete manifest %+v", p.Name(), m)
	}
	if err := writeManifest(dir, &m); err != nil {
		return "", nil, err
	}
	return dir, &m, nil
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
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
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

// lockFile takes an exclusive flock, saying so when it has to wait. The
// kernel drops the lock if the process dies, so a killed run never leaves
// a fixture locked.
func lockFile(path string, logf func(string, ...any)) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		logf("waiting for another run building %s", filepath.Base(path))
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
