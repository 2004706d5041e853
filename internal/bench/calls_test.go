package bench

import (
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/records"
)

// keyLog records the keys read through it (Gets and iterator starts),
// one list per call: mark starts the next.
type keyLog struct {
	mu    sync.Mutex
	calls [][]string
}

func (l *keyLog) mark() {
	l.mu.Lock()
	l.calls = append(l.calls, nil)
	l.mu.Unlock()
}

func (l *keyLog) add(k []byte) {
	l.mu.Lock()
	n := len(l.calls) - 1
	l.calls[n] = append(l.calls[n], string(k))
	l.mu.Unlock()
}

type logDB struct {
	engine.DB
	log *keyLog
}

func (d *logDB) NewReader() (engine.Reader, error) {
	r, err := d.DB.NewReader()
	return &logReader{Reader: r, log: d.log}, err
}

type logReader struct {
	engine.Reader
	log *keyLog
}

func (r *logReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	r.log.add(key)
	return r.Reader.Get(key, fn)
}

func (r *logReader) NewIter(o engine.IterOptions) (engine.Iterator, error) {
	r.log.add(o.Start)
	return r.Reader.NewIter(o)
}

// logSource records the records an Embed body gets.
type logSource struct {
	recordSource
	log *keyLog
}

func (s logSource) get(key []byte, i uint64) error {
	s.log.add(key)
	return s.recordSource.get(key, i)
}

// railEnv is a run of seed on the calibration rail, loaded with the data
// set: one reader or worker at a time, so a call's keys come in order.
func railEnv(t *testing.T, seed uint64) (*Env, engine.DB) {
	t.Helper()
	c := Default()
	c.KeysMil, c.ValSize, c.Seed = 0.005, 64, seed
	c.Load.LoadWorkers, c.Load.LoadTime = 1, 5*time.Millisecond
	e, err := NewEnv(c, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.Running.Store(true)
	db, err := engine.Open("memory", engine.Options{Dir: t.TempDir(), ExpectedBytes: e.Gen.LogicalBytes()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := e.WriteAll(db, GenSource{e.Gen}, 1000, 1, "memory load"); err != nil {
		t.Fatal(err)
	}
	return e, db
}

// TestCallsReadTheirOwnKeys runs each workload body that draws random
// keys for four calls (testing.Benchmark twice: b.N = 1, then 50, each
// time) and checks that two calls of the same b.N read different keys,
// and that a second run with the same -seed reads exactly the same keys
// call by call, and one with another -seed does not.
func TestCallsReadTheirOwnKeys(t *testing.T) {
	setBenchtime(t, "50x")
	bodies := map[string]func(b *testing.B, e *Env, db engine.DB, log *keyLog){
		"ReadRandom": func(b *testing.B, e *Env, db engine.DB, _ *keyLog) { readRandom(b, e, db, 1, 0.5) },
		"Scan":       func(b *testing.B, e *Env, db engine.DB, _ *keyLog) { scan(b, e, db, 1) },
		"Load": func(b *testing.B, e *Env, db engine.DB, _ *keyLog) {
			runLoad(b, e, db, "get-hit", 2000, nil)
		},
		"EmbedGet": func(b *testing.B, e *Env, _ engine.DB, log *keyLog) {
			embedGet(b, e, logSource{recordSource: recordRail{}, log: log}, nil, 1000, true)
		},
	}
	run := func(body func(*testing.B, *Env, engine.DB, *keyLog), seed uint64) [][]string {
		e, db := railEnv(t, seed)
		log := &keyLog{}
		ldb := &logDB{DB: db, log: log}
		for range 2 {
			r := testing.Benchmark(func(b *testing.B) {
				log.mark()
				body(b, e, ldb, log)
			})
			if r.N != 50 {
				t.Fatalf("the benchmark failed (N=%d)", r.N)
			}
		}
		return log.calls
	}
	for name, body := range bodies {
		a, again, other := run(body, 7), run(body, 7), run(body, 8)
		if len(a) != 4 {
			t.Fatalf("%s: %d calls logged, want 4", name, len(a))
		}
		for i := range a {
			if len(a[i]) == 0 {
				t.Fatalf("%s: call %d read nothing", name, i+1)
			}
		}
		// Load runs windows of time: compare the keys both runs reached.
		same := func(x, y []string) bool {
			n := min(len(x), len(y))
			return slices.Equal(x[:n], y[:n])
		}
		if same(a[1], a[3]) {
			t.Errorf("%s: calls 2 and 4 (b.N = 50 each) read the same keys, from %q", name, a[1][0])
		}
		if a[0][0] == a[1][0] && a[1][0] == a[2][0] {
			t.Errorf("%s: calls 1 to 3 all began with key %q", name, a[0][0])
		}
		for i := range a {
			if !same(a[i], again[i]) {
				t.Errorf("%s: call %d: the same -seed read other keys the second time", name, i+1)
			}
		}
		if same(a[1], other[1]) {
			t.Errorf("%s: -seed 7 and 8 read the same keys in call 2", name)
		}
	}
}

// recordRail is the cdb's records in memory, for Embed bodies.
type recordRail struct{}

func (recordRail) get(key []byte, i uint64) error {
	var kb [records.MaxKeySize]byte
	if string(records.Key(kb[:0], i)) != string(key) {
		return io.ErrUnexpectedEOF
	}
	return nil
}
func (recordRail) scan(limit uint64) (uint64, error) { return limit, nil }
func (recordRail) close() error                      { return nil }

// TestSamplePhaseVaries: the reads ReadRandom times are not always the
// same op numbers: over 64 calls the first read after an open is timed
// in about 1 call in 32, not in all of them.
func TestSamplePhaseVaries(t *testing.T) {
	e, _ := railEnv(t, 1)
	first := 0
	phases := map[int64]bool{}
	for n := uint64(1); n <= 64; n++ {
		p := samplePhases(e, n, 1)[0]
		phases[p] = true
		if p&LatencySampleMask == 0 {
			first++
		}
	}
	if first > 8 || len(phases) < 16 {
		t.Errorf("op 0 timed in %d of 64 calls, %d distinct phases", first, len(phases))
	}
}
