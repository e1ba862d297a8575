package transport

import "net/http"

// The operations that need no token: the health probes and the OpenAPI
// document.

func (s *server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyJSON is the body of /readyz.
type readyJSON struct {
	Status            string `json:"status"`
	QuarantinedEvents *int64 `json:"quarantined_events,omitempty"`
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) error {
	if s.Ready != nil {
		if err := s.Ready(r.Context()); err != nil {
			s.logger.WarnContext(r.Context(), "not ready", "error", err)
			writeJSON(w, http.StatusServiceUnavailable, readyJSON{Status: "unavailable"})
			return nil
		}
	}
	body := readyJSON{Status: "ok"}
	if s.QuarantinedEvents != nil {
		n, err := s.QuarantinedEvents(r.Context())
		if err != nil {
			s.logger.WarnContext(r.Context(), "not ready: counting quarantined events", "error", err)
			writeJSON(w, http.StatusServiceUnavailable, readyJSON{Status: "unavailable"})
			return nil
		}
		body.QuarantinedEvents = &n
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(OpenAPIDocument())
	return err
}
