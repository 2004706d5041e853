//go:build kvbench_slowdown

// This file is no part of the engine package on disk: kvb power adds it,
// as internal/engine/kvbench_slowdown.go, to the one build of the suite
// it slows (go test -c -overlay, benchstat/lab/power/slowdown.go), beside
// kvbench_slowdown_test.go, whose init calls SlowReads once every engine
// is registered.
package engine

// SlowReads makes every point read of the engine registered as name run
// work first, each reader a work of its own from newWork (it may keep
// state: a reader serves one goroutine), and reports whether such an
// engine is registered. work returns 0, computed from the key and its own
// result, so that it runs after the key is made and the read, whose key
// starts there, waits for it.
func SlowReads(name string, newWork func() func(key []byte) int) bool {
	info, ok := registry[name]
	if !ok {
		return false
	}
	open := info.Open
	info.Open = func(o Options) (DB, error) {
		db, err := open(o)
		if err != nil {
			return nil, err
		}
		return slowDB{db, newWork}, nil
	}
	registry[name] = info
	return true
}

type slowDB struct {
	DB
	newWork func() func(key []byte) int
}

func (d slowDB) NewReader() (Reader, error) {
	r, err := d.DB.NewReader()
	return slowReader{r, d.newWork()}, err
}

type slowReader struct {
	Reader
	work func(key []byte) int
}

func (r slowReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	return r.Reader.Get(key[r.work(key):], fn)
}
