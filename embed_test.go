package kvbench

import (
	"embed"
	"os"
	"path/filepath"
	"testing"

	"github.com/kvbench/kvbench/internal/workload/embedded"
)

// The constant database compiled into the test binary (seed 004): the
// Embed benchmarks read it where the linker put it. `make embed-data
// RECORDS=n` writes embedded.Generated (never committed), which the
// next build embeds in place of the committed one.
//
//go:embed testdata/embed-*.cdb
var embedFS embed.FS

func init() { embedded.SetFS(embedFS) }

// TestEmbeddedCDBIsReproducible rebuilds the embedded cdb from its record
// count and compares every byte, so the committed file is what the
// generator makes.
func TestEmbeddedCDBIsReproducible(t *testing.T) {
	d, err := embedded.Open(embedFS, true)
	if err != nil {
		t.Fatal(err)
	}
	if d.Records > 1_000_000 && testing.Short() {
		t.Skip("a large generated cdb")
	}
	path := filepath.Join(t.TempDir(), "again.cdb")
	if err := embedded.BuildCDB(path, d.Records, true); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(path, d.Records); err != nil {
		t.Fatal(err)
	}
}

// TestEmbedColdChild is the child process of BenchmarkEmbedColdStart: it
// opens one source, reads and verifies one record, prints how long that
// took since the parent started the process, and returns.
func TestEmbedColdChild(t *testing.T) {
	if !embedded.IsColdChild() {
		t.Skip("runs only as BenchmarkEmbedColdStart's child process")
	}
	if err := embedded.ColdChild(os.Stdout, embedFS); err != nil {
		t.Fatal(err)
	}
}
