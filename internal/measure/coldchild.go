package measure

import (
	"fmt"
	"io"
	"time"
)

// ColdChildLine prefixes the one line of figures a cold-start child
// process prints on stdout (the suite's test binary and the minimal
// embedded-cdb program print the same line, read by the same parser).
const ColdChildLine = "embed-cold-child:"

// WriteColdChild prints a cold-start child's figures: from startNS (the
// parent's clock just before it started the child, Unix ns) to t1, from t0
// to t1 (the open and read inside the child), its own peak resident size
// (rusage's maxrss of a child started by os/exec also counts the parent's
// pages until exec), and its bytes read from storage, in all and from io0
// on.
func WriteColdChild(w io.Writer, startNS int64, t0, t1 time.Time, io0 IO) error {
	io1, err := ReadIO()
	if err != nil {
		return err
	}
	m, err := ReadMem()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s first-read-ns=%d open-read-ns=%d peak-rss-kb=%d read-b=%d open-read-b=%d\n", ColdChildLine,
		t1.UnixNano()-startNS, t1.Sub(t0).Nanoseconds(), m.PeakRSS>>10, io1.ReadBytes, io1.ReadBytes-io0.ReadBytes)
	return err
}
