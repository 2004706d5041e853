package core

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/kvbench/kvbench/internal/measure"
)

// The machine's memory and the device under -dir are configuration
// lines. The run's date is not: a line whose value differs between two
// files splits benchstat's tables, so the date is the record step's label.
func TestEchoConfigNamesMachine(t *testing.T) {
	e, err := NewEnv(parseFlags(t, "-keys_mil", "0.001"), io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.Dir = t.TempDir()
	var out bytes.Buffer
	e.EchoConfig(&out)
	mem, err := measure.MemTotal()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"\nmem-total: " + Human(mem) + "\n",
		"\ndir-device: " + measure.BlockDevice(e.Dir) + "\n",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("config echo lacks %q:\n%s", line, out.String())
		}
	}
	if strings.Contains(out.String(), "\ndate:") {
		t.Errorf("config echo has a date line:\n%s", out.String())
	}
}
