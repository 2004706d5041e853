package summary

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kvbench/kvbench/benchstat/internal/results"
)

// benchstat runs benchstat on file with engines as columns.
func benchstat(file string, flags []string, stdout, stderr io.Writer) error {
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	var renamed bytes.Buffer
	if n, err := results.WithEngineKey(in, file, &renamed); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("%s: no per-engine benchmark results", file)
	}
	tmp, err := os.MkdirTemp("", "kvbench-engines")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	outPath := filepath.Join(tmp, filepath.Base(file))
	if err := os.WriteFile(outPath, renamed.Bytes(), 0o644); err != nil {
		return err
	}
	// Engines differ in their settings lines, so tables are split by unit
	// only (-table=), not by configuration, and free space on -dir changes
	// from run to run; later flags override these.
	args := append([]string{"run", results.Benchstat, "-col", "/engine", "-table=", "-ignore", "dir-fs"}, flags...)
	cmd := exec.Command("go", append(args, outPath)...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}
