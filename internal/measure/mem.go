package measure

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// RSS is the process's resident memory by kind, from /proc/self/status, in
// bytes: anonymous (heaps), file-backed (mapped files, the binary), shared
// memory, and the peak of the total.
type RSS struct{ Anon, File, Shmem, Peak int64 }

// Total is all resident memory.
func (r RSS) Total() int64 { return r.Anon + r.File + r.Shmem }

// parseStatus reads RssAnon, RssFile, RssShmem and VmHWM (kB) without
// allocating.
func parseStatus(b []byte) (RSS, error) {
	var r RSS
	found := 0
	for line := range bytes.Lines(b) {
		key, rest, _ := bytes.Cut(line, []byte(":"))
		var dst *int64
		switch string(key) {
		case "RssAnon":
			dst = &r.Anon
		case "RssFile":
			dst = &r.File
		case "RssShmem":
			dst = &r.Shmem
		case "VmHWM":
			dst = &r.Peak
		default:
			continue
		}
		var v int64
		for _, c := range rest {
			if c >= '0' && c <= '9' {
				v = v*10 + int64(c-'0')
			} else if v > 0 {
				break
			}
		}
		*dst = v << 10
		found++
	}
	if found != 4 {
		return r, fmt.Errorf("/proc/self/status: %d of RssAnon, RssFile, RssShmem, VmHWM found", found)
	}
	return r, nil
}

// ReadRSS reads the process's resident memory once.
func ReadRSS() (RSS, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return RSS{}, err
	}
	return parseStatus(b)
}

// MemSampler follows the process's resident memory while a measured
// interval runs: the kernel keeps the peak of the total (VmHWM) but not of
// each kind, so each is sampled every period (a few microseconds, no
// allocation).
type MemSampler struct {
	fd   int           // /proc/self/status, read again into buf without allocating:
	buf  []byte        // the fields wanted are within the first 4 KiB
	quit chan struct{} // nil once stopped
	done chan struct{}
	// Written by the sampling goroutine, then by Stop once it has ended.
	peak RSS // per kind, the largest seen; Peak is VmHWM
	err  error
}

// StartMemSampler resets the kernel's peak to the current resident size
// (clear_refs 5), takes a first reading and starts sampling every period.
func StartMemSampler(period time.Duration) (*MemSampler, error) {
	if err := ResetPeakRSS(); err != nil {
		return nil, fmt.Errorf("reset peak RSS: %w", err)
	}
	fd, err := unix.Open("/proc/self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /proc/self/status: %w", err)
	}
	m := &MemSampler{fd: fd, buf: make([]byte, 4<<10), quit: make(chan struct{}), done: make(chan struct{})}
	if m.peak, err = m.read(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	go m.loop(period)
	return m, nil
}

func (m *MemSampler) loop(period time.Duration) {
	defer close(m.done)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-m.quit:
			return
		case <-t.C:
			m.sample()
		}
	}
}

func (m *MemSampler) read() (RSS, error) {
	n, err := unix.Pread(m.fd, m.buf, 0)
	if err != nil {
		return RSS{}, fmt.Errorf("read /proc/self/status: %w", err)
	}
	return parseStatus(m.buf[:n])
}

func (m *MemSampler) sample() {
	r, err := m.read()
	if err != nil {
		m.err = err
		return
	}
	m.peak.Anon = max(m.peak.Anon, r.Anon)
	m.peak.File = max(m.peak.File, r.File)
	m.peak.Shmem = max(m.peak.Shmem, r.Shmem)
	m.peak.Peak = max(m.peak.Peak, r.Peak)
}

// Stop takes a last reading, stops sampling and returns the peaks: each
// kind's largest sample, and the kernel's peak of the total. Later calls
// return the same.
func (m *MemSampler) Stop() (RSS, error) {
	if m.quit != nil {
		close(m.quit)
		<-m.done
		m.sample()
		unix.Close(m.fd)
		m.quit = nil
	}
	return m.peak, m.err
}
