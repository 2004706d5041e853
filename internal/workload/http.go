package workload

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/engine"
	"github.com/kvbench/kvbench/internal/kvhttp"
	"github.com/kvbench/kvbench/internal/load"
)

// HTTP: the engine behind kvhttp on loopback, loaded at a fixed rate
// through an http.Client that keeps one connection per worker alive. The
// HTTP client shares the machine with the service and allocates per
// request, as any Go client does; the Memory rail shows that cost.
func init() {
	core.Register(&core.Workload{
		Name:     "HTTP",
		Engines:  core.Everything,
		Fixtures: kvFixture,
		Scratch:  loadScratch,
		Units:    loadUnits,
		Options:  loadFlags,
		Run: func(b *testing.B, e *core.Env, info engine.Info) {
			h := e.Open(b, e.KVFor(info))
			for _, op := range []string{"get", "put"} {
				for _, rate := range rateFlag.Get(&e.Cfg) {
					var up upserts // across every time testing runs the sub-benchmark
					n := fmt.Sprintf("op=%s/rate=%d", op, rate)
					loadLeaf(e, b, h, n, op == "put", func(b *testing.B, db engine.DB) { runHTTP(b, e, db, op, rate, &up) })
				}
			}
		},
	})
}

// httpWorker is one client goroutine: its own buffers and random stream on
// a client shared by all workers (one keep-alive connection each).
type httpWorker struct {
	keySource
	c    *http.Client
	url  string // base URL up to "?id="
	body []byte // the last response's
	buf  bytes.Buffer
	rd   bytes.Reader
	_    [64]byte
}

// do sends one request for key idx, value its body if not nil, and reads
// the whole response into w.body; a status other than want is an error.
func (w *httpWorker) do(method string, idx uint64, value []byte, want int) error {
	var body io.Reader
	if value != nil {
		w.rd.Reset(value)
		body = &w.rd
	}
	req, err := http.NewRequest(method, w.url+string(w.g.Key(w.kb[:], idx)), body)
	if err != nil {
		return err
	}
	resp, err := w.c.Do(req)
	if err != nil {
		return err
	}
	w.buf.Reset() // its storage reused: no allocation once it has grown
	_, err = w.buf.ReadFrom(resp.Body)
	w.body = w.buf.Bytes()
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err == nil && resp.StatusCode != want {
		err = fmt.Errorf("%s key %d: status %d: %s", method, idx, resp.StatusCode, w.body)
	}
	return err
}

// get asks for a random existing key and verifies the value it got.
func (w *httpWorker) get() error {
	idx := w.rng.Below(w.g.Keys)
	if err := w.do(http.MethodGet, idx, nil, http.StatusOK); err != nil {
		return err
	}
	return w.chk.Check(idx, w.body)
}

// put stores value idx under the new key idx.
func (w *httpWorker) put(idx uint64) error {
	return w.do(http.MethodPut, idx, w.g.Value(w.val, idx), http.StatusCreated)
}

// runHTTP is the body of BenchmarkHTTP<Engine>/op=get|put/rate=N.
func runHTTP(b *testing.B, e *core.Env, db engine.DB, op string, rate int, up *upserts) {
	srv, err := kvhttp.Start(db, e.Gen.ValueSize)
	fatalIf(b, err)
	defer func() { errorIf(b, srv.Close()) }()
	c := loadOf(&e.Cfg)
	n := c.LoadWorkers
	tr := &http.Transport{MaxConnsPerHost: n, MaxIdleConnsPerHost: n, DisableCompression: true, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	ws := make([]*httpWorker, n)
	rs := e.CallStreams(b)
	for i := range ws {
		ws[i] = &httpWorker{keySource: newKeySource(e, rs, 5000+uint64(i), nil), c: client, url: srv.URL() + kvhttp.Path + "?id="}
		ws[i].buf.Grow(e.Gen.ValueSize + 512)
	}
	b.ResetTimer()
	res := windows(b, func() (*load.Result, error) {
		if op == "get" {
			return load.Run(c.at(rate), func(w int, _ uint64) error { return ws[w].get() })
		}
		return up.run(e, c.at(rate), func(w int, idx uint64) error { return ws[w].put(idx) })
	})
	b.StopTimer()
	reportLoad(e, b, res)
	if op == "put" {
		up.verify(b, e, db)
	}
}
