package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/records"
)

// TestEmbedDataWritesTheCDB: the cdb of n records has the size the
// format says; no record count is refused before anything is written.
func TestEmbedDataWritesTheCDB(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e.cdb")
	if err := writeCDB(100, out, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() != records.CDBSize(100) {
		t.Errorf("%v, %v", fi, err)
	}
	var errb bytes.Buffer
	if code := embedDataCommand.Run(nil, io.Discard, &errb); code != 2 || !strings.Contains(errb.String(), "say how many records") {
		t.Errorf("no -records: exit %d, %q", code, errb.String())
	}
}
