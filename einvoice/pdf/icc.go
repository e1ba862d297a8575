package pdf

import (
	"encoding/binary"
	"math"
)

// srgbProfile builds an ICC version 2 display profile of sRGB IEC 61966-2.1
// (D50-adapted colorants, the sRGB tone curve as a 1024-entry table): the
// destination profile of the PDF/A output intent, which makes the DeviceRGB
// and DeviceGray colours the page uses device-independent. Built rather than
// shipped: a few hundred bytes of well-known numbers, no licence question.
func srgbProfile() []byte {
	curve := curveTag()
	table, body := tagTable([]iccTag{
		{"desc", descTag("sRGB IEC61966-2.1")},
		{"cprt", textTag("No copyright, use freely")},
		{"wtpt", xyzTag(0.9642, 1.0, 0.8249)},
		{"rXYZ", xyzTag(0.4360747, 0.2225045, 0.0139322)},
		{"gXYZ", xyzTag(0.3850649, 0.7168786, 0.0971045)},
		{"bXYZ", xyzTag(0.1430804, 0.0606169, 0.7141733)},
		{"rTRC", curve}, {"gTRC", curve}, {"bTRC", curve},
	})
	header := make([]byte, 128)
	binary.BigEndian.PutUint32(header[0:], uint32(128+len(table)+len(body)))
	binary.BigEndian.PutUint32(header[8:], 0x02100000) // version 2.1
	copy(header[12:], "mntrRGB XYZ ")
	for i, v := range []uint16{2026, 1, 1, 0, 0, 0} { // fixed: deterministic bytes
		binary.BigEndian.PutUint16(header[24+2*i:], v)
	}
	copy(header[36:], "acsp")
	copy(header[68:], xyzTag(0.9642, 1.0, 0.8249)[8:]) // the PCS illuminant, D50
	return append(append(header, table...), body...)
}

type iccTag struct {
	sig  string
	data []byte
}

// tagTable lays out the tag table and the tag data after it, 4-byte
// aligned; tags with the same data (the three curves) share one copy.
func tagTable(tags []iccTag) (table, body []byte) {
	table = binary.BigEndian.AppendUint32(nil, uint32(len(tags)))
	start := 128 + 4 + 12*len(tags)
	at := map[string]int{}
	for _, t := range tags {
		off, ok := at[string(t.data)]
		if !ok {
			off = start + len(body)
			at[string(t.data)] = off
			body = append(body, t.data...)
			for len(body)%4 != 0 {
				body = append(body, 0)
			}
		}
		table = append(table, t.sig...)
		table = binary.BigEndian.AppendUint32(table, uint32(off))
		table = binary.BigEndian.AppendUint32(table, uint32(len(t.data)))
	}
	return table, body
}

func s15f16(v float64) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(int32(math.Round(v*65536))))
}

func xyzTag(x, y, z float64) []byte {
	b := append([]byte("XYZ "), 0, 0, 0, 0)
	for _, v := range []float64{x, y, z} {
		b = append(b, s15f16(v)...)
	}
	return b
}

func textTag(s string) []byte {
	b := append([]byte("text"), 0, 0, 0, 0)
	return append(append(b, s...), 0)
}

// descTag is the version 2 textDescriptionType: ASCII, then empty Unicode
// and ScriptCode parts.
func descTag(s string) []byte {
	b := append([]byte("desc"), 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)+1))
	b = append(append(b, s...), 0)
	b = append(b, make([]byte, 4+4+2+1+67)...)
	return b
}

// curveTag is the sRGB electro-optical transfer function sampled 1024 times.
func curveTag() []byte {
	const n = 1024
	b := append([]byte("curv"), 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, n)
	for i := 0; i < n; i++ {
		v := float64(i) / (n - 1)
		if v <= 0.04045 {
			v /= 12.92
		} else {
			v = math.Pow((v+0.055)/1.055, 2.4)
		}
		b = binary.BigEndian.AppendUint16(b, uint16(math.Round(v*65535)))
	}
	return b
}
