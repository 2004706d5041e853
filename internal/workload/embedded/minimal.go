package embedded

import (
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

// minimalChildPkg is the minimal cold-start child: a program that holds
// only the embedded cdb (seed 004's shape), built at run time so it embeds
// the very bytes this run embeds.
const minimalChildPkg = "github.com/kvbench/kvbench/internal/cmd/embedchild"

// minimalChildCDB is the file the minimal child embeds; committed empty,
// replaced by the run's cdb through go build -overlay.
const minimalChildCDB = "embedded.cdb"

// minimalBuildSlack is what a minimal child's build writes besides the
// cdb's three copies (the compiled package holding it in the build cache
// and in the build's work directory, and the linked binary): the standard
// library compiled into a fresh build cache (about 60 MB) and the program
// itself.
const minimalBuildSlack = 256 << 20

// skipError is a reason the run goes on without something this machine
// cannot provide (the go command, this module's source).
type skipError string

func (s skipError) Error() string { return string(s) }

// buildMinimalChild builds the minimal child with the cdb at cdbPath
// embedded, as dir/embedchild, with go build and no cgo. Everything the
// build writes stays under dir, inside the run's -dir: its build cache
// and temporary files (dir/build, removed before returning; the package
// compiled with the cdb in it is as large as the cdb) and the binary,
// fsynced so eviction can drop its pages. The go command comes from PATH
// (go test puts its own first) and reads this module's source from the
// working directory; without either it returns a skipError.
func buildMinimalChild(root dataset.Root, dir, cdbPath string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", skipError("child=minimal is built at run time by the go command, and there is none on PATH: " + err.Error())
	}
	// The user's go env file, where the go command looks for it, found
	// before the config directory moves (running go env would itself
	// write telemetry).
	goenv := os.Getenv("GOENV")
	if goenv == "" {
		if cfg, err := os.UserConfigDir(); err == nil {
			goenv = filepath.Join(cfg, "go", "env")
		} else {
			goenv = "off"
		}
	}
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
		// The go command writes telemetry counters under the user's config
		// directory: moved under dir, with the user's go env file kept.
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
	overlay, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(src, minimalChildCDB): cdbPath},
	})
	if err != nil {
		return "", err
	}
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

// minimalChild builds the minimal child into dir for this run's cdb (the
// file fixture: the same bytes the test binary embeds) and says so on the
// log, with a warning when its Go differs from the test binary's.
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
