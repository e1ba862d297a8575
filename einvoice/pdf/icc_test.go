package pdf

import (
	"encoding/binary"
	"testing"
)

// TestSRGBProfile checks the ICC profile's frame: the size in its header,
// the signatures PDF/A validators read, and every tag inside the file.
func TestSRGBProfile(t *testing.T) {
	p := srgbProfile()
	be := binary.BigEndian
	if got := int(be.Uint32(p)); got != len(p) {
		t.Fatalf("header size %d, file %d bytes", got, len(p))
	}
	if string(p[12:24]) != "mntrRGB XYZ " || string(p[36:40]) != "acsp" || be.Uint32(p[8:]) != 0x02100000 {
		t.Fatalf("header %q", p[:40])
	}
	n := int(be.Uint32(p[128:]))
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		e := p[132+12*i:]
		sig, off, size := string(e[:4]), int(be.Uint32(e[4:])), int(be.Uint32(e[8:]))
		if off%4 != 0 || off+size > len(p) || off < 132+12*n {
			t.Errorf("tag %s at %d+%d outside the data", sig, off, size)
		}
		seen[sig] = true
	}
	for _, sig := range []string{"desc", "cprt", "wtpt", "rXYZ", "gXYZ", "bXYZ", "rTRC", "gTRC", "bTRC"} {
		if !seen[sig] {
			t.Errorf("tag %s missing", sig)
		}
	}
}
