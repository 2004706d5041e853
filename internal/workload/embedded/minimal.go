package embedded

import (
	"cmp"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kvbench/kvbench/internal/core"
	"github.com/kvbench/kvbench/internal/dataset"
	"github.com/kvbench/kvbench/internal/engine"
)

// minimalChildPkg is the minimal cold-start child, holding only the
// embedded cdb (seed 004's shape): built per run around this run's bytes.
const minimalChildPkg = "github.com/kvbench/kvbench/internal/cmd/embedchild"

// minimalBuildSlack is what its build writes besides the cdb's three copies
// (in the build cache, the work directory and the binary): the standard
// library in a fresh build cache (about 60 MB) and the program.
const minimalBuildSlack = 256 << 20

// skipError is why the run goes on without what this machine cannot
// provide (the go command, this module's source).
type skipError string

func (s skipError) Error() string { return string(s) }

// buildMinimalChild builds dir/embedchild with the cdb at cdbPath embedded
// (go build, no cgo), writing only under dir: its build cache and
// temporary files (dir/build, removed on return) and the binary, fsynced
// so eviction can drop its pages. Without a go command on PATH or this
// module's source in the working directory it returns a skipError.
func buildMinimalChild(root dataset.Root, dir, cdbPath string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", skipError("child=minimal is built at run time by the go command, and there is none on PATH: " + err.Error())
	}
	// The user's go env file, found before the config directory moves (go
	// env would itself write telemetry).
	goenv := os.Getenv("GOENV")
	if cfg, err := os.UserConfigDir(); goenv == "" && err == nil {
		goenv = filepath.Join(cfg, "go", "env")
	}
	goenv = cmp.Or(goenv, "off")
	work := filepath.Join(dir, "build")
	defer root.RemoveAll(work)
	for _, d := range []string{"cache", "tmp", "config"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return "", err
		}
	}
	env := append(os.Environ(),
		"GOCACHE="+filepath.Join(work, "cache"),
		"GOTMPDIR="+filepath.Join(work, "tmp"),
		"TMPDIR="+filepath.Join(work, "tmp"), // the compiler's and linker's own
		"CGO_ENABLED=0",                      // a static Go program, as the seed's
		"GOFLAGS=-buildvcs=false",            // none of the user's build flags (-race, tags) apply
		"GOWORK=off",
		"GOPROXY=off", // modules come from the cache the suite was built from; nothing is downloaded
		"GOTOOLCHAIN=local",
		// The go command's telemetry goes under dir; the user's go env file is kept.
		"XDG_CONFIG_HOME="+filepath.Join(work, "config"),
		"GOENV="+goenv,
	)
	goRun := func(args ...string) (string, error) {
		cmd := exec.Command(goCmd, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	src, err := goRun("list", "-f", "{{.Dir}}", minimalChildPkg)
	if err != nil {
		wd, _ := os.Getwd()
		return "", skipError(fmt.Sprintf("child=minimal is built from this module's source, which the go command does not find from %s (run the benchmark inside the kvbench module): %v", wd, err))
	}
	overlay, _ := json.Marshal(map[string]map[string]string{ // strings: nothing to fail on
		"Replace": {filepath.Join(src, "embedded.cdb"): cdbPath}, // committed empty
	})
	ovPath := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(ovPath, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "embedchild")
	if _, err := goRun("build", "-overlay", ovPath, "-o", bin, minimalChildPkg); err != nil {
		return "", fmt.Errorf("building the minimal cold-start child (GOPROXY=off: `go mod download` fills the module cache): %w", err)
	}
	return bin, engine.SyncPath(bin) // durable: dirty pages cannot be evicted
}

// minimalChild builds the minimal child into dir from the cdb file fixture
// (the bytes the test binary embeds) and logs it, warning when its Go
// differs from the test binary's.
func minimalChild(e *core.Env, d *CDB, dir string) (string, error) {
	path, err := filePath(e, d)
	if err != nil {
		return "", err
	}
	start := time.Now()
	bin, err := buildMinimalChild(e.Root, dir, path)
	if err != nil {
		return "", err
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	e.Logf("built the minimal cold-start child %s in %.1fs: %s, %s, no cgo", bin, time.Since(start).Seconds(), core.Human(fi.Size()), bi.GoVersion)
	if bi.GoVersion != runtime.Version() {
		e.WarnOnce("minimal child go", "child=minimal was built by %s, the test binary by %s: the two children run different Go runtimes", bi.GoVersion, runtime.Version())
	}
	return bin, nil
}

// asSkip reports the reason when err says the run goes on without it.
func asSkip(err error) (string, bool) {
	s, ok := errors.AsType[skipError](err)
	return string(s), ok
}
