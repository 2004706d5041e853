package kvhttp

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/engine"
)

func do(t *testing.T, method, url string, body []byte) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestService runs the service in front of every engine: PUT, GET, DELETE,
// and the errors a client can provoke.
func TestService(t *testing.T) {
	for _, info := range engine.All() {
		t.Run(info.Name, func(t *testing.T) {
			if info.Missing != "" {
				t.Skip(info.Missing)
			}
			// Every engine option at its declared default (engine.Open
			// fills them in); Badger's 1 MiB value threshold needs a
			// memtable of at least 7 MiB.
			db, err := engine.Open(info.Name, engine.Options{
				Dir: t.TempDir(), CacheMB: 8, MemtableMB: 8, Compression: "none", BloomBitsPerKey: 10,
				ExpectedBytes: 1 << 20,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s, err := Start(db, 1024)
			if err != nil {
				t.Fatal(err)
			}
			if ip := s.ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
				t.Fatalf("listening on %v, want loopback only", ip)
			}
			u := s.URL() + Path + "?id="
			val := bytes.Repeat([]byte("v"), 1000)
			if c, _ := do(t, "PUT", u+"k1", val); c != http.StatusCreated {
				t.Fatalf("PUT: %d", c)
			}
			if c, b := do(t, "GET", u+"k1", nil); c != http.StatusOK || !bytes.Equal(b, val) {
				t.Fatalf("GET: %d, %d bytes", c, len(b))
			}
			if c, _ := do(t, "GET", u+"k2", nil); c != http.StatusNotFound {
				t.Fatalf("GET of a missing key: %d", c)
			}
			if c, _ := do(t, "DELETE", u+"k1", nil); c != http.StatusAccepted {
				t.Fatalf("DELETE: %d", c)
			}
			if c, _ := do(t, "GET", u+"k1", nil); c != http.StatusNotFound {
				t.Fatalf("GET after DELETE: %d", c)
			}
			if c, _ := do(t, "GET", s.URL()+Path, nil); c != http.StatusBadRequest {
				t.Errorf("no id: %d", c)
			}
			if c, _ := do(t, "POST", u+"k1", val); c != http.StatusMethodNotAllowed {
				t.Errorf("POST: %d", c)
			}
			if c, _ := do(t, "PUT", u+"big", make([]byte, 1025)); c != http.StatusRequestEntityTooLarge {
				t.Errorf("oversized PUT: %d", c)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := http.Get(u + "k1"); err == nil || !strings.Contains(err.Error(), "refused") {
				t.Errorf("after Close: %v, want connection refused", err)
			}
		})
	}
}
