package measure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The device's own limits, the ceiling for an engine's figures: random 4 KiB
// O_DIRECT reads, sequential writes ending in fsync, sequential reads of an
// evicted file. The files made (PrepareFile, SeqWriteFsync) are created
// under a fresh "kvbench-disk-*" name in the directory the caller names and
// left for the caller to remove; one whose making failed is removed.

// ErrNoDirectIO is wrapped by RandomReadsDirect's error when the filesystem
// cannot do O_DIRECT reads (EINVAL) or has no device (tmpfs, ramfs).
var ErrNoDirectIO = errors.New("direct I/O not supported")

const (
	diskBlock  = 4 << 10 // random read size and alignment
	seqBlock   = 1 << 20 // sequential read and write size
	seqPattern = 8 << 20 // distinct random bytes SeqWriteFsync cycles through
	filePrefix = "kvbench-disk-*"
)

// DiskResult is what one disk measurement saw.
type DiskResult struct {
	Path        string        // the file read or written; the caller removes files these functions created
	Threads     int           // goroutines issuing I/O
	Ops         int64         // read or write calls completed
	Bytes       int64         // bytes read or written
	Elapsed     time.Duration // wall time of the whole run, including SeqWriteFsync's final fsync
	IOPS        float64       // Ops per second of Elapsed
	BytesPerSec float64       // Bytes per second of Elapsed
	Latency     *Recorder     // latency of each read or write call
	Fsync       time.Duration // SeqWriteFsync: the final fsync alone
	IO          IO            // change in /proc/self/io over the run (whole process)
}

func (r *DiskResult) finish(start time.Time, io0 IO) {
	r.Elapsed = time.Since(start)
	if io1, err := ReadIO(); err == nil {
		r.IO = io1.Sub(io0)
	}
	if s := r.Elapsed.Seconds(); s > 0 {
		r.IOPS = float64(r.Ops) / s
		r.BytesPerSec = float64(r.Bytes) / s
	}
}

// newSource returns a random byte source seeded afresh, so no two files
// share content a device could deduplicate.
func newSource() *rand.ChaCha8 {
	var seed [32]byte
	for i := 0; i < len(seed); i += 8 {
		binary.LittleEndian.PutUint64(seed[i:], rand.Uint64())
	}
	return rand.NewChaCha8(seed)
}

// createIn creates a new file under a fresh name in dir.
func createIn(dir string) (*os.File, error) {
	if dir == "" {
		return nil, errors.New("measure: empty directory")
	}
	return os.CreateTemp(dir, filePrefix)
}

// PrepareFile writes size random bytes to a new file in dir, fsyncs it and
// returns its path, for RandomReadsDirect and SeqRead. The caller removes it.
func PrepareFile(dir string, size int64) (path string, err error) {
	if size <= 0 {
		return "", fmt.Errorf("prepare file: size %d", size)
	}
	f, err := createIn(dir)
	if err != nil {
		return "", fmt.Errorf("prepare file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			path, err = "", fmt.Errorf("prepare file: %w", err)
		}
	}()
	if _, err := io.CopyN(f, newSource(), size); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}

// RandomReadsDirect makes ops reads of 4 KiB at random aligned offsets of
// the file at path (at least 4 KiB; PrepareFile), with O_DIRECT so that each
// goes to the device, from threads goroutines at once (the queue depth),
// each read's latency into Latency.
func RandomReadsDirect(path string, threads int, ops int) (DiskResult, error) {
	if threads < 1 || ops < 1 {
		return DiskResult{}, fmt.Errorf("random reads: threads %d, ops %d: both must be positive", threads, ops)
	}
	threads = min(threads, ops)
	if abs, err := filepath.Abs(path); err == nil {
		if fs, err := FileSystem(abs); err == nil && (fs.Type == "tmpfs" || fs.Type == "ramfs") {
			return DiskResult{}, fmt.Errorf("random reads of %s: %w: it is on %s, which has no device", path, ErrNoDirectIO, fs.Type)
		}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EINVAL) {
		return DiskResult{}, fmt.Errorf("random reads: open %s with O_DIRECT: %w (%v)", path, ErrNoDirectIO, err)
	}
	if err != nil {
		return DiskResult{}, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return DiskResult{}, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	blocks := st.Size / diskBlock
	if blocks == 0 {
		return DiskResult{}, fmt.Errorf("random reads: %s holds %d bytes, less than one %d-byte block", path, st.Size, diskBlock)
	}
	// One page-aligned block per goroutine, as O_DIRECT requires.
	mem, err := unix.Mmap(-1, 0, threads*diskBlock, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return DiskResult{}, fmt.Errorf("random reads: buffers: %w", err)
	}
	defer unix.Munmap(mem)

	recs := make([]*Recorder, threads)
	errs := make([]error, threads)
	seed := rand.Uint64()
	startGun := make(chan struct{})
	var wg sync.WaitGroup
	for i := range threads {
		buf := mem[i*diskBlock : (i+1)*diskBlock : (i+1)*diskBlock]
		recs[i] = NewRecorder()
		rec, rng := recs[i], rand.New(rand.NewPCG(seed, uint64(i)))
		wg.Go(func() {
			<-startGun
			for range (ops - i + threads - 1) / threads { // ops split evenly, the first ones one more
				off := rng.Int64N(blocks) * diskBlock
				t := time.Now()
				got, err := preadFull(fd, buf, off)
				rec.Record(time.Since(t))
				if err != nil {
					if errors.Is(err, unix.EINVAL) {
						err = fmt.Errorf("%w (%v)", ErrNoDirectIO, err)
					}
					errs[i] = fmt.Errorf("random reads: pread %s at %d: %w", path, off, err)
					return
				}
				if got != diskBlock {
					errs[i] = fmt.Errorf("random reads: pread %s at %d: %d bytes, want %d", path, off, got, diskBlock)
					return
				}
			}
		})
	}
	io0, _ := ReadIO()
	start := time.Now()
	close(startGun)
	wg.Wait()
	r := DiskResult{Path: path, Threads: threads, Ops: int64(ops), Bytes: int64(ops) * diskBlock, Latency: Merge(recs...)}
	r.finish(start, io0)
	if err := errors.Join(errs...); err != nil {
		return DiskResult{}, err
	}
	return r, nil
}

func preadFull(fd int, b []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}

// WritePattern is fresh random content (at most 8 MiB) for SeqWriteFsync
// to cycle through. Make it outside the timing: it costs about a tenth of
// writing 64 MiB.
func WritePattern(size int64) []byte {
	pattern := make([]byte, max(0, min(size, seqPattern)))
	newSource().Read(pattern)
	return pattern
}

// SeqWriteFsync writes size bytes of pattern to a new file in dir in 1 MiB
// writes, then fsyncs it (BytesPerSec counts the fsync); the caller removes
// DiskResult.Path.
func SeqWriteFsync(dir string, size int64, pattern []byte) (r DiskResult, err error) {
	if size <= 0 {
		return DiskResult{}, fmt.Errorf("sequential write: size %d", size)
	}
	if len(pattern) == 0 {
		return DiskResult{}, fmt.Errorf("sequential write: no pattern to write")
	}
	f, err := createIn(dir)
	if err != nil {
		return DiskResult{}, fmt.Errorf("sequential write: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	r = DiskResult{Path: f.Name(), Threads: 1, Latency: NewRecorder()}
	io0, _ := ReadIO()
	start := time.Now()
	for pos := int64(0); r.Bytes < size; {
		n := min(size-r.Bytes, seqBlock, int64(len(pattern))-pos)
		t := time.Now()
		if _, err := f.Write(pattern[pos : pos+n]); err != nil {
			return DiskResult{}, fmt.Errorf("sequential write: %w", err)
		}
		r.Latency.Record(time.Since(t))
		r.Ops++
		r.Bytes += n
		if pos += n; pos == int64(len(pattern)) {
			pos = 0
		}
	}
	t := time.Now()
	if err := f.Sync(); err != nil {
		return DiskResult{}, fmt.Errorf("sequential write: fsync: %w", err)
	}
	r.Fsync = time.Since(t)
	r.finish(start, io0)
	if err := f.Close(); err != nil {
		return DiskResult{}, fmt.Errorf("sequential write: %w", err)
	}
	return r, nil
}

// SeqRead reads the file at path from start to end in 1 MiB reads. To
// measure the device, EvictFile it first and check with Resident that
// nothing stayed, outside the timing.
func SeqRead(path string) (DiskResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return DiskResult{}, fmt.Errorf("sequential read: %w", err)
	}
	defer f.Close()
	r := DiskResult{Path: path, Threads: 1, Latency: NewRecorder()}
	buf := make([]byte, seqBlock)
	io0, _ := ReadIO()
	start := time.Now()
	for {
		t := time.Now()
		n, err := f.Read(buf)
		if n > 0 {
			r.Latency.Record(time.Since(t))
			r.Ops++
			r.Bytes += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return DiskResult{}, fmt.Errorf("sequential read: %w", err)
		}
	}
	r.finish(start, io0)
	return r, nil
}
