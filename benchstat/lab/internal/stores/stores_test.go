package stores

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInBinary: the stores a test binary lists benchmarks of, the
// reference rail left out; none is an error that names the family.
func TestInBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kvbench.test")
	list := "#!/bin/sh\nprintf 'BenchmarkOpenBolt\\nBenchmarkOpenMemory\\nBenchmarkOpenPebble\\n'\n"
	if err := os.WriteFile(bin, []byte(list), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := InBinary(bin, "Open"); err != nil || strings.Join(got, ",") != "Bolt,Pebble" {
		t.Errorf("InBinary(Open) = %q, %v; want Bolt,Pebble", got, err)
	}
	if _, err := InBinary(bin, "Populate"); err == nil || !strings.Contains(err.Error(), "lists no BenchmarkPopulate<Engine>") {
		t.Errorf("a binary with no Populate benchmark: %v", err)
	}
}
