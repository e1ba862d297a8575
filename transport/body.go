package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/invoicing/invoicing/command"
)

// Whether a write may be sent without a body.
type bodyPresence int

const (
	bodyRequired bodyPresence = iota
	// bodyOptional: an empty body (Content-Length: 0) reads as {}, whatever
	// its Content-Type; issue and void may be sent so.
	bodyOptional
)

// decodeCommand is the one way a write's body becomes its command's
// request: read by readBody's rules, then decoded and validated once by
// the command's own parser. A body that is not one well-formed JSON object
// is an error here (400); violations of the request's rules travel in the
// command.Parsed value to the use case, which answers them after its
// checks that come first (command.Parsed).
func decodeCommand[T any](r *http.Request, maxBytes int64, presence bodyPresence, parse func([]byte) (command.Parsed[T], error)) (command.Parsed[T], error) {
	if presence == bodyOptional && r.ContentLength == 0 {
		return parse([]byte("{}"))
	}
	raw, err := readBody(r, maxBytes)
	if err != nil {
		return command.Parsed[T]{}, err
	}
	return parse(raw)
}

// mergePatchType is the media type of a JSON Merge Patch (RFC 7396).
const mergePatchType = "application/merge-patch+json"

// decodePatch is decodeCommand for an update (PATCH): a body is required,
// sent as a JSON Merge Patch or as plain JSON (RFC 7396 §4 registers the
// first; many clients only know the second), else 415.
func decodePatch[T any](r *http.Request, maxBytes int64, parse func([]byte) (command.Parsed[T], error)) (command.Parsed[T], error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" && mediaType != mergePatchType {
		return command.Parsed[T]{}, errUnsupportedPatchMediaType
	}
	raw, err := readLimited(r, maxBytes)
	if err != nil {
		return command.Parsed[T]{}, err
	}
	return parse(raw)
}

// readBody reads a write's body: it must be JSON by Content-Type (415) and
// at most maxBytes (413), and arrive within the read timeout (408).
func readBody(r *http.Request, maxBytes int64) ([]byte, error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return nil, errUnsupportedMediaType
	}
	return readLimited(r, maxBytes)
}

// readLimited reads a body of at most maxBytes (413) that must arrive
// within the read timeout (408).
func readLimited(r *http.Request, maxBytes int64) ([]byte, error) {
	if r.ContentLength > maxBytes {
		return nil, errPayloadTooLarge{limit: maxBytes}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The server's ReadTimeout passed mid-body: a client that stalled
		// or trickled it gets 408, not 500.
		return nil, fmt.Errorf("%w: %w", errRequestTimeout, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(raw)) > maxBytes {
		return nil, errPayloadTooLarge{limit: maxBytes}
	}
	return raw, nil
}

// writeJSON renders v with status. Encoding errors cannot be reported to a
// client that already has the status line, so they are dropped here and the
// types rendered are plain structs that always encode.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONInto(w, status, v, make([]byte, 0, 4096))
}

// writeJSONInto is writeJSON appending a jsonAppender's body to buf, and
// returns buf as the body grew it.
func writeJSONInto(w http.ResponseWriter, status int, v any, buf []byte) []byte {
	w.Header().Set("Content-Type", "application/json")
	if a, ok := v.(jsonAppender); ok {
		body := append(a.appendJSON(buf), '\n') // the newline Encode writes
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return body
	}
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return buf
}

// bodyBuffers keeps the buffers of the invoice lists' bodies, about 77 KB
// each, from one list to the next: making and zeroing one for every list
// was 5% of a list's service CPU. The zero value is ready.
type bodyBuffers struct{ pool sync.Pool }

// maxKeptBody is the largest buffer kept: a list of the most items a page
// may hold with long strings in them is not kept for the next.
const maxKeptBody = 256 << 10

// get is a kept buffer, emptied; nil when none is kept, and the list then
// sizes its own (appendedList).
func (b *bodyBuffers) get() []byte {
	if buf, ok := b.pool.Get().(*[]byte); ok {
		return (*buf)[:0]
	}
	return nil
}

func (b *bodyBuffers) put(buf []byte) {
	if cap(buf) <= maxKeptBody {
		b.pool.Put(&buf)
	}
}
