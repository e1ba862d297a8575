package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/invoicing/invoicing/projections"
)

// progressBar shows a rebuild's progress: a redrawn line with events/s and
// ETA on a terminal, plain lines every few seconds otherwise (logs, CI).
type progressBar struct {
	w        io.Writer
	terminal bool
	total    int64 // -1 when unknown
	last     time.Time
	applied  int64
	started  time.Time
}

func newProgressBar(w io.Writer, terminal bool, total int64) *progressBar {
	return &progressBar{w: w, terminal: terminal, total: total, started: time.Now()}
}

const plainEvery = 2 * time.Second

func (b *progressBar) update(p projections.Progress) {
	b.applied = p.Applied
	now := time.Now()
	if !b.terminal && now.Sub(b.last) < plainEvery {
		return
	}
	b.last = now
	line := b.line(p.Projection, now)
	if b.terminal {
		fmt.Fprintf(b.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(b.w, line)
	}
}

func (b *progressBar) line(name string, now time.Time) string {
	elapsed := now.Sub(b.started).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(b.applied) / elapsed
	}
	if b.total <= 0 {
		return fmt.Sprintf("%s: %d events, %.0f events/s", name, b.applied, rate)
	}
	const width = 30
	done := min(b.applied, b.total)
	filled := int(float64(width) * float64(done) / float64(b.total))
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(b.total-done)/rate) * time.Second).String()
	}
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	return fmt.Sprintf("%s [%s] %d/%d events, %.0f events/s, ETA %s", name, bar, done, b.total, rate, eta)
}

func (b *progressBar) done(name string, err error) {
	if b.terminal {
		fmt.Fprint(b.w, "\r\033[K")
	}
	if err != nil {
		fmt.Fprintf(b.w, "%s: rebuild stopped after %d events: %v\n", name, b.applied, err)
		return
	}
	fmt.Fprintf(b.w, "%s: rebuilt from %d events in %s and swapped in\n", name, b.applied, time.Since(b.started).Round(time.Millisecond))
}
