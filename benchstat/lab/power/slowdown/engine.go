//go:build kvbench_slowdown

// This file is no part of the engine package on disk: kvb power adds it,
// as internal/engine/kvbench_slowdown.go, to the one build of the suite
// it slows (go test -c -overlay, benchstat/lab/power/slowdown.go), beside
// kvbench_slowdown_test.go, whose init calls SlowReads once every engine
// is registered.
package engine

// SlowReads makes every point read of the engine registered as name run
// work first, and reports whether such an engine is registered.
func SlowReads(name string, work func()) bool {
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
		return slowDB{db, work}, nil
	}
	registry[name] = info
	return true
}

type slowDB struct {
	DB
	work func()
}

func (d slowDB) NewReader() (Reader, error) {
	r, err := d.DB.NewReader()
	return slowReader{r, d.work}, err
}

type slowReader struct {
	Reader
	work func()
}

func (r slowReader) Get(key []byte, fn func([]byte) error) (bool, error) {
	r.work()
	return r.Reader.Get(key, fn)
}
