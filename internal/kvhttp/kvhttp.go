// Package kvhttp serves an engine.DB as a small key-value service over
// HTTP/1.1 on the loopback interface, the shape of seed 003's service:
//
//	GET    /v0/entity?id=KEY   200 and the value, or 404
//	PUT    /v0/entity?id=KEY   201; the request body is the value
//	DELETE /v0/entity?id=KEY   202
//
// Each request is one engine operation: a GET takes a fresh Reader (it sees
// every write acknowledged before it), a PUT commits a batch of one.
package kvhttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/kvbench/kvbench/internal/engine"
)

// Path is the one resource the service has.
const Path = "/v0/entity"

// Server is a running service.
type Server struct {
	db       engine.DB
	maxValue int64
	ln       net.Listener
	srv      *http.Server
	done     chan error
	bufs     sync.Pool // *[]byte values copied out of a read before writing
}

// Start serves db on 127.0.0.1 at a port the kernel picks. Values longer
// than maxValue bytes are refused with 413.
func Start(db engine.DB, maxValue int) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{db: db, maxValue: int64(maxValue), ln: ln, done: make(chan error, 1)}
	s.bufs.New = func() any { b := make([]byte, 0, maxValue); return &b }
	mux := http.NewServeMux()
	mux.HandleFunc(Path, s.entity)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// URL is the service's base URL, http://127.0.0.1:port.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops accepting connections, waits for requests in flight (at most
// 5s) and for the server to stop. It does not close the DB.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

func (s *Server) entity(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		http.Error(w, "missing id", http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodGet:
		s.get(w, []byte(id))
	case http.MethodPut:
		s.put(w, r, []byte(id))
	case http.MethodDelete:
		if err := engine.Delete(s.db, []byte(id)); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Allow", "GET, PUT, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// get copies the value out of the engine's read, so no read transaction or
// pinned block is held while the response goes out on the network.
func (s *Server) get(w http.ResponseWriter, key []byte) {
	rd, err := s.db.NewReader()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	found, err := rd.Get(key, func(v []byte) error { *bp = append((*bp)[:0], v...); return nil })
	if cerr := rd.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case !found:
		http.Error(w, "not found", http.StatusNotFound)
	default:
		w.Header().Set("Content-Length", strconv.Itoa(len(*bp)))
		w.WriteHeader(http.StatusOK)
		w.Write(*bp)
	}
}

func (s *Server) put(w http.ResponseWriter, r *http.Request, key []byte) {
	if r.ContentLength > s.maxValue {
		http.Error(w, fmt.Sprintf("value of %d bytes is over the limit of %d", r.ContentLength, s.maxValue), http.StatusRequestEntityTooLarge)
		return
	}
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf := bytes.NewBuffer((*bp)[:0])
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, s.maxValue))
	v := buf.Bytes()
	*bp = v[:0]
	if err != nil {
		code := http.StatusBadRequest
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, err.Error(), code)
		return
	}
	if err := engine.Put(s.db, key, v); err != nil { // Set copies v
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusCreated)
}
