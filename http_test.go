package kvbench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/kvhttp"
	"github.com/kvbench/kvbench/internal/load"
)

// httpWorker is one client goroutine: its own buffers and random stream on
// a client shared by all workers (one keep-alive connection each).
type httpWorker struct {
	c    *http.Client
	url  string // base URL up to "?id="
	rng  dataset.Rand
	chk  *dataset.Checker
	kb   [dataset.KeySize]byte
	val  []byte
	body []byte
	rd   bytes.Reader
	_    [64]byte
}

// do sends one request and reads the whole response into w.body.
func (w *httpWorker) do(method string, key, value []byte) (int, error) {
	var body io.Reader
	if value != nil {
		w.rd.Reset(value)
		body = &w.rd
	}
	req, err := http.NewRequest(method, w.url+string(key), body)
	if err != nil {
		return 0, err
	}
	resp, err := w.c.Do(req)
	if err != nil {
		return 0, err
	}
	w.body = w.body[:0]
	for {
		if len(w.body) == cap(w.body) {
			w.body = append(w.body, 0)[:len(w.body)]
		}
		n, err := resp.Body.Read(w.body[len(w.body):cap(w.body)])
		w.body = w.body[:len(w.body)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			resp.Body.Close()
			return 0, err
		}
	}
	return resp.StatusCode, resp.Body.Close()
}

// get asks for a random existing key and verifies the value it got.
func (w *httpWorker) get() error {
	idx := w.rng.Below(cfg.gen.Keys)
	code, err := w.do(http.MethodGet, cfg.gen.Key(w.kb[:], idx), nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET key %d: status %d: %s", idx, code, w.body)
	}
	return w.chk.Check(idx, w.body)
}

// put stores value idx under the new key idx.
func (w *httpWorker) put(idx uint64) error {
	code, err := w.do(http.MethodPut, cfg.gen.Key(w.kb[:], idx), cfg.gen.Value(w.val, idx))
	if err != nil {
		return err
	}
	if code != http.StatusCreated {
		return fmt.Errorf("PUT key %d: status %d: %s", idx, code, w.body)
	}
	return nil
}

// runHTTP is the body of BenchmarkHTTP<Engine>/op=get|put/rate=N: the
// engine behind kvhttp on loopback, loaded at a fixed rate through an
// http.Client that keeps one connection per worker alive. The HTTP client
// shares the machine with the service and allocates per request, as any Go
// client does; the Memory rail shows that cost.
func runHTTP(b *testing.B, title, op string, rate int) {
	db, closeDB := openLoadDB(b, title, op == "put")
	defer closeDB()
	srv, err := kvhttp.Start(db, cfg.gen.ValueSize)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := srv.Close(); err != nil {
			b.Error(err)
		}
	}()
	n := *flagLoadWorkers
	tr := &http.Transport{MaxConnsPerHost: n, MaxIdleConnsPerHost: n, DisableCompression: true, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	ws := make([]*httpWorker, n)
	for i := range ws {
		ws[i] = &httpWorker{c: client, url: srv.URL() + kvhttp.Path + "?id=", rng: dataset.NewRand(*flagSeed, 5000+uint64(i)),
			chk: cfg.gen.NewChecker(cfg.fullCheck), val: make([]byte, cfg.gen.ValueSize), body: make([]byte, 0, cfg.gen.ValueSize+512)}
	}
	upserted := uint64(0)
	b.ResetTimer()
	res := windows(b, func(int) (*load.Result, error) {
		if op == "get" {
			return load.Run(loadConfig(rate), func(w int, _ uint64) error { return ws[w].get() })
		}
		base := cfg.gen.Keys + upserted
		r, err := load.Run(loadConfig(rate), func(w int, seq uint64) error { return ws[w].put(base + seq) })
		if r != nil {
			upserted += uint64(r.Done) // seq 0..Done-1 were written
		}
		return r, err
	})
	b.StopTimer()
	reportLoad(b, res)
	if op == "put" {
		verifyUpserts(b, db, res)
	}
}

func benchHTTP(b *testing.B, title string) {
	for _, op := range []string{"get", "put"} {
		for _, rate := range *flagRate {
			b.Run(fmt.Sprintf("op=%s/rate=%d", op, rate), func(b *testing.B) { runHTTP(b, title, op, rate) })
		}
	}
}

func BenchmarkHTTPBadger(b *testing.B)  { benchHTTP(b, "Badger") }
func BenchmarkHTTPBolt(b *testing.B)    { benchHTTP(b, "Bolt") }
func BenchmarkHTTPLmdb(b *testing.B)    { benchHTTP(b, "Lmdb") }
func BenchmarkHTTPRocksDB(b *testing.B) { benchHTTP(b, "RocksDB") }
func BenchmarkHTTPPebble(b *testing.B)  { benchHTTP(b, "Pebble") }
func BenchmarkHTTPMemory(b *testing.B)  { benchHTTP(b, "Memory") }
