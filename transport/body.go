package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"unicode/utf8"
)

// readObject reads a create's body: it must be JSON by Content-Type (415),
// at most maxBytes (413), and exactly one well-formed JSON object (400).
// Numbers stay json.Number so that validation sees them exactly.
func readObject(r *http.Request, maxBytes int64) (map[string]any, error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return nil, errUnsupportedMediaType
	}
	if r.ContentLength > maxBytes {
		return nil, errPayloadTooLarge{limit: maxBytes}
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(raw)) > maxBytes {
		return nil, errPayloadTooLarge{limit: maxBytes}
	}
	if !utf8.Valid(raw) {
		// encoding/json would quietly turn bad bytes into U+FFFD and store
		// text the client never sent.
		return nil, fmt.Errorf("%w: the body is not valid UTF-8", errMalformedBody)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformedBody, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: trailing data after the object", errMalformedBody)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: got a JSON %T", errMalformedBody, v)
	}
	return obj, nil
}

// writeJSON renders v with status. Encoding errors cannot be reported to a
// client that already has the status line, so they are dropped here and the
// types rendered are plain structs that always encode.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
