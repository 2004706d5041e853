package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// compiledMagic are the first bytes of compiled files: ELF, Mach-O (both
// byte orders, 32 and 64 bits), a universal binary, an ar archive ("!<ar")
// and PE ("MZ", any two bytes after).
var compiledMagic = []string{"7f454c46", "cffaedfe", "cefaedfe", "feedfacf", "feedface", "cafebabe", "213c6172", "4d5a"}

// checkNoTrackedBinaries fails when a file git tracks is a compiled one:
// build outputs are ignored (.gitignore), never added.
func checkNoTrackedBinaries(ctx context.Context, _, stderr io.Writer) error {
	out, err := exec.CommandContext(ctx, "git", "ls-files", "-z").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	var bad []string
	for _, f := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if f != "" && isCompiled(f) {
			bad = append(bad, f)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(stderr, "vet: tracked compiled files (remove them with git rm --cached; build outputs are not part of the source): %s\n", strings.Join(bad, " "))
		return fmt.Errorf("%d tracked compiled files", len(bad))
	}
	return nil
}

// isCompiled says whether the regular file at path starts as a compiled
// one does.
func isCompiled(path string) bool {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	h := hex.EncodeToString(head[:n])
	for _, m := range compiledMagic {
		if strings.HasPrefix(h, m) {
			return true
		}
	}
	return false
}
