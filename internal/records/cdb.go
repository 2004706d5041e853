package records

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/alldroll/cdb"
)

// cdb's layout (http://cr.yp.to/cdb.html, as github.com/alldroll/cdb writes
// it): a 2048-byte header of 256 table pointers, then per record an 8-byte
// length pair, the key and the value, then 256 hash tables with two 8-byte
// slots per record. Every position is a uint32, and alldroll/cdb refuses
// to reach 0xffffffff.
const (
	cdbHeader      = 256 * 8
	cdbPerRecord   = 8 + 2*8
	cdbMaxFileSize = 0xffffffff - 1
)

// ErrTooBig says a record set does not fit in one cdb file.
var ErrTooBig = errors.New("cdb files hold at most 4 GiB (32-bit offsets)")

// CDBSize is the exact size of the cdb file that Build writes for n records.
func CDBSize(n uint64) int64 {
	return cdbHeader + int64(n)*cdbPerRecord + LogicalBytes(n)
}

// MaxCDBRecords is the largest record count whose cdb file fits the format.
func MaxCDBRecords() uint64 {
	// Each record takes more than cdbPerRecord bytes: the answer is below the bound.
	tooMany := func(n int) bool { return CDBSize(uint64(n)) > cdbMaxFileSize }
	return uint64(sort.Search(cdbMaxFileSize/cdbPerRecord, tooMany) - 1)
}

// CheckCDB returns an error naming the size when n records do not fit in
// one cdb file.
func CheckCDB(n uint64) error {
	if n == 0 {
		return errors.New("a cdb of 0 records cannot be read back: ask for at least 1")
	}
	if s := CDBSize(n); s > cdbMaxFileSize {
		return fmt.Errorf("%d records make a %d-byte cdb, over the format's limit of %d bytes (at most %d records): %w",
			n, s, int64(cdbMaxFileSize), MaxCDBRecords(), ErrTooBig)
	}
	return nil
}

// Build writes records 0..n-1 as a cdb into w, empty and at its start,
// refusing a set that cannot fit before writing anything; progress, if
// set, gets the records written so far every 64Ki records. alldroll/cdb
// writes its hash tables 8 bytes per call to w: wrap a file in a
// SeekBuffer unless the write calls are what is measured.
func Build(w io.WriteSeeker, n uint64, progress func(done uint64)) error {
	if err := CheckCDB(n); err != nil {
		return err
	}
	wr, err := cdb.New().GetWriter(w)
	if err != nil {
		return err
	}
	var kb [MaxKeySize]byte
	var vb [MaxValueSize]byte
	for i := uint64(0); i < n; i++ {
		if err := wr.Put(Key(kb[:0], i), Value(vb[:0], i)); err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		if progress != nil && i&0xffff == 0xffff {
			progress(i + 1)
		}
	}
	if err := wr.Close(); err != nil {
		return err
	}
	if progress != nil {
		progress(n)
	}
	return nil
}

// SeekBuffer is a buffered io.WriteSeeker: writes collect in memory and go
// to the underlying file in large calls; Seek writes them out first. Flush
// before closing the file.
type SeekBuffer struct {
	*bufio.Writer
	ws io.WriteSeeker
}

// NewSeekBuffer buffers writes to ws in size-byte calls.
func NewSeekBuffer(ws io.WriteSeeker, size int) *SeekBuffer {
	return &SeekBuffer{bufio.NewWriterSize(ws, size), ws}
}

func (s *SeekBuffer) Seek(off int64, whence int) (int64, error) {
	if err := s.Flush(); err != nil {
		return 0, err
	}
	return s.ws.Seek(off, whence)
}
