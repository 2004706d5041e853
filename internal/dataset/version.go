package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Versions: a key a workload rewrites gets a value of its own per version,
// so a read can tell which write it sees. Version 0 is Value(i), what a
// fixture holds. Version v's words are salted by v, and its first is v
// masked by a per-key stamp: a reader recovers v from the value and checks
// the rest against (i, v), catching another key's value or a torn one.
// Values need two words for versions (VersionedValues).

// VersionedValues reports whether values are long enough to carry a
// version.
func (g *Gen) VersionedValues() bool { return g.ValueSize >= 16 && g.chunk >= 16 }

// stamp masks the version in a versioned value's first word.
func (g *Gen) stamp(i uint64) uint64 { return mix64(i ^ g.valSalt ^ 0x7665727369306e00) }

// wordV is word w of version ver of value i's random chunk.
func (g *Gen) wordV(i uint64, w int, ver uint64) uint64 {
	switch {
	case ver == 0:
		return g.word(i, w)
	case w == 0:
		return ver ^ g.stamp(i)
	}
	return mix64(i*0x9e3779b97f4a7c15 + uint64(w)*0xd1b54a32d192ed03 + (g.valSalt ^ mix64(ver*0xa0761d6478bd642f)))
}

// ValueV writes version ver of value i into dst (grown if short) and
// returns it; ValueV(dst, i, 0) is Value(dst, i). A version above 0 needs
// VersionedValues, and repeats its whole words only.
func (g *Gen) ValueV(dst []byte, i, ver uint64) []byte {
	if ver == 0 {
		return g.Value(dst, i)
	}
	n := g.ValueSize
	if cap(dst) < n {
		dst = make([]byte, n)
	}
	dst = dst[:n]
	c := min(g.chunk, n) &^ 7
	for p := 0; p < c; p += 8 {
		binary.LittleEndian.PutUint64(dst[p:], g.wordV(i, p/8, ver))
	}
	for p := c; p < n; {
		p += copy(dst[p:], dst[:c])
	}
	return dst
}

// VersionOf reads the version a value of key i claims, checking only its
// first word against version 0; CheckV verifies the rest.
func (g *Gen) VersionOf(i uint64, v []byte) uint64 {
	if len(v) < 8 || !g.VersionedValues() {
		return 0
	}
	w0 := binary.LittleEndian.Uint64(v)
	if w0 == g.word(i, 0) {
		return 0
	}
	return w0 ^ g.stamp(i)
}

// CheckV verifies that v is some version of value i, as CheckCheap does
// (full: every byte, built in scratch), and returns that version.
func (g *Gen) CheckV(i uint64, v []byte, full bool, scratch []byte) (uint64, error) {
	ver := g.VersionOf(i, v)
	if ver == 0 {
		if full {
			return 0, g.CheckFull(i, v, scratch)
		}
		return 0, g.CheckCheap(i, v)
	}
	if len(v) != g.ValueSize {
		return ver, fmt.Errorf("%w: index %d: %d bytes, want %d", ErrWrongValue, i, len(v), g.ValueSize)
	}
	if full {
		if !bytes.Equal(v, g.ValueV(scratch, i, ver)) {
			return ver, fmt.Errorf("%w: index %d version %d: contents differ", ErrWrongValue, i, ver)
		}
		return ver, nil
	}
	for k, p := range g.checkAt {
		if binary.LittleEndian.Uint64(v[p:]) != g.wordV(i, g.checkWord[k], ver) {
			return ver, fmt.Errorf("%w: index %d version %d: word at byte %d", ErrWrongValue, i, ver, p)
		}
	}
	return ver, nil
}

// CheckV verifies that v is some version of value i and returns it.
func (c *Checker) CheckV(i uint64, v []byte) (uint64, error) {
	return c.g.CheckV(i, v, c.full, c.scratch)
}

// IndexAny is Index for any index the generator can make, beyond Keys
// included.
func (g *Gen) IndexAny(key []byte) (uint64, bool) { return g.indexBelow(key, 1<<62) }
