package pdf

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// TestXMPIsWellFormed: the packet parses as XML whatever the text (markup
// characters, no date for a draft), and says what it must.
func TestXMPIsWellFormed(t *testing.T) {
	for _, in := range []docInfo{
		{Title: `Invoice <&>"'`, Author: "Ωμέγα & Co", Subject: "x", Creator: "c", Producer: Producer, Date: "2026-11-20", Lang: "en", FacturX: true},
		{Title: "Draft invoice", Producer: Producer, Lang: "de"},
	} {
		packet := xmpPacket(in)
		dec := xml.NewDecoder(bytes.NewReader(packet))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("XMP of %q is not well-formed: %v\n%s", in.Title, err, packet)
			}
		}
		s := string(packet)
		if strings.Contains(s, "fx:ConformanceLevel") != in.FacturX {
			t.Errorf("%q: Factur-X properties present = %v, want %v", in.Title, !in.FacturX, in.FacturX)
		}
		if strings.Contains(s, "xmp:CreateDate") != (in.Date != "") {
			t.Errorf("%q: a date without the document's date, or none with it", in.Title)
		}
		if !strings.Contains(s, "<pdfaid:part>3</pdfaid:part>") {
			t.Errorf("%q: no PDF/A-3 identification", in.Title)
		}
	}
}
