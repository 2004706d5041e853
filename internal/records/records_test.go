package records

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/alldroll/cdb"
)

func TestRecordShape(t *testing.T) {
	var kb [MaxKeySize]byte
	var vb [MaxValueSize]byte
	for _, i := range []uint64{0, 1, 9, 10, 99, 12345, 19999999, 1<<64 - 1} {
		k := string(Key(kb[:0], i))
		v := Value(vb[:0], i)
		if want := "k_" + strconv.FormatUint(i, 10); k != want {
			t.Fatalf("Key(%d) = %q, want %q", i, k, want)
		}
		if want := "Lorem ipsum dolor sit amet, consectetur adipiscing elit " + k; string(v) != want {
			t.Fatalf("Value(%d) = %q, want %q", i, v, want)
		}
		if err := Check(i, v); err != nil {
			t.Fatal(err)
		}
		if got, ok := Index([]byte(k)); !ok || got != i {
			t.Fatalf("Index(%q) = %d, %v", k, got, ok)
		}
		if j, err := CheckKV([]byte(k), v); err != nil || j != i {
			t.Fatalf("CheckKV(%q) = %d, %v", k, j, err)
		}
	}
	if err := Check(10, Value(vb[:0], 1)); err == nil {
		t.Fatal("value of record 1 passed as record 10's")
	}
	if err := Check(12, Value(vb[:0], 21)); err == nil {
		t.Fatal("value of record 21 passed as record 12's")
	}
	v := Value(vb[:0], 7)
	v[3] = 'X'
	if err := Check(7, v); err == nil {
		t.Fatal("a changed prefix passed")
	}
	for _, k := range []string{"", "k_", "k_01", "x_1", "k_1a", "k_18446744073709551616"} {
		if _, ok := Index([]byte(k)); ok {
			t.Fatalf("Index(%q) accepted", k)
		}
	}
}

func TestKeyDoesNotAllocate(t *testing.T) {
	var kb [MaxKeySize]byte
	var vb [MaxValueSize]byte
	i := uint64(0)
	if n := testing.AllocsPerRun(100, func() {
		i += 12345
		Check(i, Value(vb[:0], i))
		Index(Key(kb[:0], i))
	}); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}

func TestSizes(t *testing.T) {
	var kb [MaxKeySize]byte
	var vb [MaxValueSize]byte
	var keys, logical int64
	for i := uint64(0); i < 120_000; i++ {
		if KeyBytes(i) != keys || LogicalBytes(i) != logical {
			t.Fatalf("n=%d: KeyBytes %d LogicalBytes %d, want %d %d", i, KeyBytes(i), LogicalBytes(i), keys, logical)
		}
		keys += int64(len(Key(kb[:0], i)))
		logical += int64(len(Key(kb[:0], i)) + len(Value(vb[:0], i)))
	}
	// The seed's 20M records made a 1.9 GB file.
	if s := CDBSize(20_000_000); s < 1_800_000_000 || s > 2_000_000_000 {
		t.Fatalf("20M records: %d bytes", s)
	}
}

// TestBuildReadBack builds cdbs of sizes across digit boundaries, checks
// the predicted size and reads every record back by key and by iteration.
func TestBuildReadBack(t *testing.T) {
	for _, n := range []uint64{1, 10, 11, 1001, 20_000} {
		for _, buffered := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "r.cdb")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			var ws io.WriteSeeker = f
			sb := NewSeekBuffer(f, 1<<16)
			if buffered {
				ws = sb
			}
			var last uint64
			if err := Build(ws, n, func(d uint64) { last = d }); err != nil {
				t.Fatal(err)
			}
			if err := sb.Flush(); err != nil {
				t.Fatal(err)
			}
			f.Close()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != CDBSize(n) || last != n {
				t.Fatalf("n=%d: file %d bytes, CDBSize %d, progress %d", n, len(data), CDBSize(n), last)
			}
			r, err := cdb.New().GetReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if uint64(r.Size()) != n {
				t.Fatalf("n=%d: cdb says %d records", n, r.Size())
			}
			var kb [MaxKeySize]byte
			for i := uint64(0); i < n; i++ {
				v, err := r.Get(Key(kb[:0], i))
				if err == nil {
					err = Check(i, v)
				}
				if err != nil {
					t.Fatalf("n=%d: get %d: %v", n, i, err)
				}
			}
			if _, err := r.Get([]byte("k_" + strconv.FormatUint(n, 10))); !errors.Is(err, cdb.ErrEntryNotFound) {
				t.Fatalf("record past the end: %v", err)
			}
			it, err := r.Iterator()
			if err != nil {
				t.Fatal(err)
			}
			i := uint64(0)
			for ; ; i++ {
				k, err := it.Key()
				if err != nil {
					t.Fatal(err)
				}
				v, err := it.Value()
				if err != nil {
					t.Fatal(err)
				}
				if j, err := CheckKV(k, v); err != nil || j != i {
					t.Fatalf("iteration %d: record %d, %v", i, j, err)
				}
				if ok, err := it.Next(); err != nil || !ok {
					break
				}
			}
			if i+1 != n {
				t.Fatalf("iterated %d records, want %d", i+1, n)
			}
		}
	}
}

// countingWriter is an io.WriteSeeker that only counts.
type countingWriter struct{ writes, seeks int }

func (c *countingWriter) Write(p []byte) (int, error)    { c.writes++; return len(p), nil }
func (c *countingWriter) Seek(int64, int) (int64, error) { c.seeks++; return 0, nil }

func TestTooBigFailsBeforeWriting(t *testing.T) {
	max := MaxCDBRecords()
	if CDBSize(max) > 0xfffffffe || CDBSize(max+1) <= 0xfffffffe {
		t.Fatalf("MaxCDBRecords %d: sizes %d, %d", max, CDBSize(max), CDBSize(max+1))
	}
	for _, n := range []uint64{max + 1, 100_000_000, 0} {
		var w countingWriter
		err := Build(&w, n, nil)
		if err == nil || w.writes+w.seeks != 0 {
			t.Fatalf("n=%d: err %v after %d writes and %d seeks", n, err, w.writes, w.seeks)
		}
		if n > 0 && (!errors.Is(err, ErrTooBig) || !strings.Contains(err.Error(), strconv.FormatUint(n, 10))) {
			t.Fatalf("n=%d: %v", n, err)
		}
	}
}
