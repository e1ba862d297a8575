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

	"github.com/invoicing/invoicing/command"
)

// readObject reads a create's body: it must be JSON by Content-Type (415),
// at most maxBytes (413), and exactly one well-formed JSON object (400, see
// command.DecodeObject).
func readObject(r *http.Request, maxBytes int64) (map[string]any, error) {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return nil, errUnsupportedMediaType
	}
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
	return command.DecodeObject(raw)
}

// readOptionalObject reads the body of an operation that may be sent
// without one (issuing an invoice): an empty body is a nil object, anything
// else follows readObject's rules.
func readOptionalObject(r *http.Request, maxBytes int64) (map[string]any, error) {
	if r.ContentLength == 0 {
		return nil, nil
	}
	return readObject(r, maxBytes)
}

// writeJSON renders v with status. Encoding errors cannot be reported to a
// client that already has the status line, so they are dropped here and the
// types rendered are plain structs that always encode.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	if a, ok := v.(jsonAppender); ok {
		body := append(a.appendJSON(make([]byte, 0, 4096)), '\n') // the newline Encode writes
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
