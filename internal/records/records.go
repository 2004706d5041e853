// Package records generates the record set of a constant database (cdb)
// benchmark: keys k_<n> and values "Lorem ipsum dolor sit amet, consectetur
// adipiscing elit k_<n>", the shape of the goembeddb experiment, in write
// order n = 0, 1, 2, ... Each record can be rebuilt and checked from its
// index alone, so readers verify every value without holding the set.
package records

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
)

// ValuePrefix starts every value; the record's key follows it.
const ValuePrefix = "Lorem ipsum dolor sit amet, consectetur adipiscing elit "

// keyPrefix starts every key; the record's index in decimal follows it.
const keyPrefix = "k_"

// MaxKeySize and MaxValueSize bound any record's key and value, so callers
// can keep scratch space on the stack.
const (
	MaxKeySize   = len(keyPrefix) + 20 // 20 digits hold any uint64
	MaxValueSize = len(ValuePrefix) + MaxKeySize
)

// Key appends the key of record i to dst[:0] and returns it. With a dst of
// MaxKeySize capacity it does not allocate.
func Key(dst []byte, i uint64) []byte {
	return strconv.AppendUint(append(dst[:0], keyPrefix...), i, 10)
}

// Value appends the value of record i to dst[:0] and returns it. With a dst
// of MaxValueSize capacity it does not allocate.
func Value(dst []byte, i uint64) []byte {
	return strconv.AppendUint(append(append(dst[:0], ValuePrefix...), keyPrefix...), i, 10)
}

// Check reports whether v is exactly the value of record i.
func Check(i uint64, v []byte) error {
	var vb [MaxValueSize]byte
	if want := Value(vb[:0], i); !bytes.Equal(v, want) {
		return fmt.Errorf("record %d: value %q is not %q", i, v, string(want))
	}
	return nil
}

// CheckKV maps key back to its record and checks that v is its value; it
// verifies records that come back in an order other than write order.
func CheckKV(key, v []byte) (uint64, error) {
	i, ok := Index(key)
	if !ok {
		return 0, fmt.Errorf("key %q is not a record key", key)
	}
	return i, Check(i, v)
}

// Index parses a record key back to its index.
func Index(key []byte) (uint64, bool) {
	digits, ok := bytes.CutPrefix(key, []byte(keyPrefix))
	if !ok || len(digits) > 1 && digits[0] == '0' {
		return 0, false
	}
	i, err := strconv.ParseUint(string(digits), 10, 64)
	return i, err == nil
}

// digitSum is the total number of decimal digits of 0, 1, ..., n-1: one
// each, and one more for each power of ten a number reaches.
func digitSum(n uint64) uint64 {
	total := n
	for p := uint64(10); p < n; p *= 10 {
		total += n - p
		if p > math.MaxUint64/10 {
			break // the next power of ten does not fit
		}
	}
	return total
}

// KeyBytes and LogicalBytes are the sizes of the first n records' keys and
// of their keys and values together.
func KeyBytes(n uint64) int64 { return int64(n*uint64(len(keyPrefix)) + digitSum(n)) }

func LogicalBytes(n uint64) int64 { return 2*KeyBytes(n) + int64(n)*int64(len(ValuePrefix)) }
