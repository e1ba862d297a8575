package pdf

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf16"
)

// finish turns fpdf's output into the file we serve: PDF 1.7 with a binary
// comment, our own Info dictionary and document catalog, the XMP metadata
// linked from the catalog (fpdf's SetXmpMetadata writes the stream but
// never links it), the sRGB output intent, for a Factur-X file the embedded
// factur-x.xml as an associated file (/AF, /AFRelationship), and a trailer
// /ID derived from the content. fpdf writes the Info dictionary and the
// catalog as its last two objects, just before the cross-reference table;
// finish keeps every object before them byte for byte, writes its own
// objects after them and a new cross-reference table.
func (r *Renderer) finish(raw []byte, info docInfo, xml []byte) ([]byte, error) {
	w, infoNum, catalogNum, err := rebase(raw, len(xml), r.zlib)
	if err != nil {
		return nil, err
	}
	meta, icc, intent := w.next(), w.next(), w.next()
	w.stream(meta, "/Type /Metadata /Subtype /XML", xmpPacket(info), false)
	w.streamRaw(icc, "/N 3 /Filter /FlateDecode", r.iccFlate)
	w.object(intent, "<< /Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier (sRGB IEC61966-2.1) /Info (sRGB IEC61966-2.1) /DestOutputProfile "+ref(icc)+" >>")
	var files string
	if xml != nil {
		files = w.facturX(xml, info.Date)
	}
	w.object(infoNum, "<< /Title "+textString(info.Title)+" /Author "+textString(info.Author)+" /Subject "+textString(info.Subject)+
		" /Creator "+textString(info.Creator)+" /Producer "+textString(info.Producer)+
		dateEntry(" /CreationDate ", info.Date)+dateEntry(" /ModDate ", info.Date)+" >>")
	w.object(catalogNum, "<< /Type /Catalog /Pages 1 0 R /Metadata "+ref(meta)+" /OutputIntents ["+ref(intent)+"]"+
		" /Lang "+textString(info.Lang)+" /ViewerPreferences << /DisplayDocTitle true >>"+files+" >>")
	w.trailer(catalogNum, infoNum)
	return w.buf.Bytes(), nil
}

// rebase starts the new file from fpdf's: a PDF 1.7 header with the binary
// comment PDF/A asks for, then every object before fpdf's Info dictionary
// and catalog (its last two), moved by the header's change in length.
func rebase(raw []byte, extra int, zlib *deflater) (w *writer, infoNum, catalogNum int, err error) {
	offsets, err := xrefOffsets(raw)
	if err != nil {
		return nil, 0, 0, err
	}
	size := len(offsets) // objects 1..size-1
	infoNum, catalogNum = size-2, size-1
	cut, headerEnd := offsets[infoNum], bytes.IndexByte(raw, '\n')+1
	if cut > offsets[catalogNum] || headerEnd == 0 || headerEnd > cut {
		return nil, 0, 0, errors.New("pdf: unexpected fpdf output layout")
	}
	header := []byte("%PDF-1.7\n%\xE2\xE3\xCF\xD3\n")
	w = &writer{buf: bytes.NewBuffer(make([]byte, 0, len(raw)+extra+8192)), offsets: make([]int, size, size+6), zlib: zlib}
	w.buf.Write(header)
	order := make([]int, 0, infoNum)
	for n := 1; n < infoNum; n++ {
		order = append(order, n)
	}
	slices.SortFunc(order, func(a, b int) int { return offsets[a] - offsets[b] })
	if len(order) > 0 && offsets[order[0]] != headerEnd {
		return nil, 0, 0, errors.New("pdf: unexpected fpdf output layout")
	}
	for i, n := range order {
		end := cut
		if i+1 < len(order) {
			end = offsets[order[i+1]]
		}
		w.offsets[n] = w.buf.Len()
		w.copyObject(n, raw[offsets[n]:end])
	}
	return w, infoNum, catalogNum, nil
}

// copyObject copies object n of fpdf's output, deflating it on the way
// when it is a stream fpdf left uncompressed (its dictionary only
// "<</Length L>>": the page contents, which fpdf is told not to compress,
// and the font's ToUnicode map). fpdf makes a new zlib writer for every
// stream it compresses, about a megabyte of state each time; ours come
// from a pool.
func (w *writer) copyObject(n int, obj []byte) {
	head := strconv.Itoa(n) + " 0 obj\n<</Length "
	rest, ok := bytes.CutPrefix(obj, []byte(head))
	if ok {
		digits, after, found := bytes.Cut(rest, []byte(">>\nstream\n"))
		length, err := strconv.Atoi(string(digits))
		if found && err == nil && length <= len(after) &&
			bytes.Equal(after[length:], []byte("\nendstream\nendobj\n")) {
			w.streamRaw(n, "/Filter /FlateDecode", w.zlib.deflate(after[:length]))
			return
		}
	}
	w.buf.Write(obj)
}

// facturX embeds xml as factur-x.xml, an associated file of the document,
// and returns the catalog entries that point at it.
func (w *writer) facturX(xml []byte, date string) string {
	ef, spec := w.next(), w.next()
	sum := md5.Sum(xml)
	params := fmt.Sprintf("/Size %d /CheckSum <%x>", len(xml), sum) + dateEntry(" /ModDate ", date)
	w.stream(ef, "/Type /EmbeddedFile /Subtype /text#2Fxml /Params << "+params+" >>", xml, true)
	w.object(spec, "<< /Type /Filespec /F ("+facturXFileName+") /UF ("+facturXFileName+") /Desc (Factur-X invoice, profile EN 16931)"+
		" /AFRelationship /Alternative /EF << /F "+ref(ef)+" /UF "+ref(ef)+" >> >>")
	return " /Names << /EmbeddedFiles << /Names [(" + facturXFileName + ") " + ref(spec) + "] >> >> /AF [" + ref(spec) + "] /PageMode /UseAttachments"
}

// xrefOffsets reads fpdf's classic cross-reference table: one subsection
// "0 N" of N 20-byte entries. offsets[n] is where object n starts.
func xrefOffsets(raw []byte) ([]int, error) {
	at := bytes.LastIndex(raw, []byte("\nxref\n"))
	if at < 0 {
		return nil, errors.New("pdf: no cross-reference table in fpdf output")
	}
	rest := raw[at+len("\nxref\n"):]
	eol := bytes.IndexByte(rest, '\n')
	var first, count int
	if _, err := fmt.Sscanf(string(rest[:max(eol, 0)]), "%d %d", &first, &count); err != nil || first != 0 || count < 3 {
		return nil, fmt.Errorf("pdf: unexpected cross-reference subsection %q", rest[:max(eol, 0)])
	}
	entries := rest[eol+1:]
	if len(entries) < 20*count {
		return nil, errors.New("pdf: truncated cross-reference table")
	}
	offsets := make([]int, count)
	for n := 1; n < count; n++ {
		off, err := strconv.Atoi(string(entries[20*n : 20*n+10]))
		if err != nil {
			return nil, fmt.Errorf("pdf: cross-reference entry %d: %w", n, err)
		}
		offsets[n] = off
	}
	return offsets, nil
}

// writer appends numbered objects and remembers where each starts.
type writer struct {
	buf     *bytes.Buffer
	offsets []int // offsets[n] is where object n starts; len is the next free number
	zlib    *deflater
}

// next reserves the next object number.
func (w *writer) next() int {
	w.offsets = append(w.offsets, 0)
	return len(w.offsets) - 1
}

func (w *writer) start(n int) {
	for len(w.offsets) <= n {
		w.offsets = append(w.offsets, 0)
	}
	w.offsets[n] = w.buf.Len()
	fmt.Fprintf(w.buf, "%d 0 obj\n", n)
}

func (w *writer) object(n int, body string) {
	w.start(n)
	w.buf.WriteString(body)
	w.buf.WriteString("\nendobj\n")
}

// stream writes data as a stream object, deflated when compress is set.
func (w *writer) stream(n int, dict string, data []byte, compress bool) {
	if compress {
		w.streamRaw(n, dict+" /Filter /FlateDecode", w.zlib.deflate(data))
		return
	}
	w.streamRaw(n, dict, data)
}

func (w *writer) streamRaw(n int, dict string, data []byte) {
	w.start(n)
	fmt.Fprintf(w.buf, "<< %s /Length %d >>\nstream\n", dict, len(data))
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
}

// trailer writes the cross-reference table and the trailer. The /ID (which
// PDF/A requires) is a hash of everything before it: the same content
// always gets the same id, and different content a different one.
func (w *writer) trailer(root, info int) {
	id := sha256.Sum256(w.buf.Bytes())
	xref := w.buf.Len()
	fmt.Fprintf(w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets))
	for _, off := range w.offsets[1:] {
		fmt.Fprintf(w.buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(w.buf, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /ID [<%x> <%x>] >>\nstartxref\n%d\n%%%%EOF\n",
		len(w.offsets), root, info, id[:16], id[:16], xref)
}

func ref(n int) string { return strconv.Itoa(n) + " 0 R" }

// textString is a PDF text string: UTF-16BE with its byte order mark, in
// hex, so any character and no escaping question.
func textString(s string) string {
	var b bytes.Buffer
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}

// dateEntry is key and the PDF date of the start (UTC) of a YYYY-MM-DD
// day, or nothing when day is not such a date (a draft has no issue date:
// its file then carries no date rather than the time of rendering).
func dateEntry(key, day string) string {
	if !isDay(day) {
		return ""
	}
	return key + "(D:" + day[0:4] + day[5:7] + day[8:10] + "000000Z)"
}

func isDay(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i, c := range []byte(s) {
		if i != 4 && i != 7 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// deflater compresses streams with reused zlib writers (BestSpeed): a new
// one allocates about a megabyte, which was most of what a PDF's
// compression cost. The writers are kept in a free list of their own, not
// a sync.Pool, which drops what it holds at every other collection: a
// render allocates megabytes (go-pdf/fpdf's font work), so the pool was
// emptied every few renders and its writers made again, a quarter of the
// bytes a render allocated. A Renderer has one; it is safe for concurrent
// use.
type deflater struct {
	writers chan *zlib.Writer
}

// keptWriters is how many idle writers a deflater keeps: renders at once
// beyond it make a writer and drop it.
const keptWriters = 4

func newDeflater() *deflater {
	return &deflater{writers: make(chan *zlib.Writer, keptWriters)}
}

// deflate compresses data; compress/zlib writing to memory cannot fail.
func (d *deflater) deflate(data []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(data)/2 + 64)
	zw := d.writer(&b)
	_, _ = zw.Write(data)
	_ = zw.Close()
	select {
	case d.writers <- zw:
	default: // keptWriters are idle already
	}
	return b.Bytes()
}

// writer is an idle writer reset to write to w, else a new one.
func (d *deflater) writer(w io.Writer) *zlib.Writer {
	select {
	case zw := <-d.writers:
		zw.Reset(w)
		return zw
	default:
		zw, _ := zlib.NewWriterLevel(w, zlib.BestSpeed) // a valid level: no error
		return zw
	}
}
