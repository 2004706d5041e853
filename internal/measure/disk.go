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

// The device's own limits on the filesystem of a directory: random 4 KiB
// reads with O_DIRECT, sequential writes ending in fsync, and sequential
// reads of an evicted file. They give the ceiling an engine's figures can be
// set against.
//
// Files: every file these functions create is created in the directory the
// caller names (PrepareFile and SeqWriteFsync, under a fresh
// "kvbench-disk-*" name) and nowhere else, and is left there for the caller
// to remove (the returned path, or DiskResult.Path). When one of them fails,
// it removes the file it was creating before returning.

// ErrNoDirectIO is wrapped by RandomReadsDirect's error when the file's
// filesystem cannot do O_DIRECT reads (open or read fails with EINVAL) or
// has no device under it (tmpfs, ramfs).
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

// newSource returns a fast random byte source seeded differently each call,
// so no two files share content a device could deduplicate.
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
	src := newSource()
	buf := make([]byte, seqBlock)
	for left := size; left > 0; left -= int64(len(buf)) {
		buf = buf[:min(left, int64(len(buf)))]
		src.Read(buf)
		if _, err := f.Write(buf); err != nil {
			return "", err
		}
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}

// RandomReadsDirect reads 4 KiB blocks at random 4 KiB-aligned offsets of
// the file at path with O_DIRECT, so every read goes to the device, from
// threads goroutines at once (the queue depth), ops reads in all. Each read's
// latency goes into Latency. The file must hold at least 4 KiB; PrepareFile
// makes one. When the filesystem cannot do direct I/O the error wraps
// ErrNoDirectIO.
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
	for i := range recs {
		recs[i] = NewRecorder()
	}
	seed := rand.Uint64()
	startGun := make(chan struct{})
	var wg sync.WaitGroup
	for i := range threads {
		n := ops / threads
		if i < ops%threads {
			n++
		}
		buf := mem[i*diskBlock : (i+1)*diskBlock : (i+1)*diskBlock]
		rec, rng := recs[i], rand.New(rand.NewPCG(seed, uint64(i)))
		wg.Go(func() {
			<-startGun
			for range n {
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

// WritePattern is random content for SeqWriteFsync to write a size-byte
// file from (at most 8 MiB, cycled through), fresh each call, so no two
// files share content a device could deduplicate. Make it outside whatever
// times the write: generating it costs about a tenth of writing 64 MiB.
func WritePattern(size int64) []byte {
	pattern := make([]byte, max(0, min(size, seqPattern)))
	newSource().Read(pattern)
	return pattern
}

// SeqWriteFsync writes size bytes to a new file in dir in 1 MiB writes,
// cycling through pattern (WritePattern), then fsyncs it; BytesPerSec
// counts the fsync in. The file stays for the caller to remove
// (DiskResult.Path); SeqRead can read it.
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

// SeqRead reads the file at path from start to end in 1 MiB reads, and
// does nothing else: to measure the device, evict the file first
// (EvictFile) and check what stayed (Resident), outside whatever times the
// call. BytesPerSec is from the device only when nothing stayed (all of a
// file stays on tmpfs, and dirty or mapped pages anywhere).
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
