package bench

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// txPos is an event's place in the PostgreSQL store's global order:
// (transaction id, global_position), the "hi/lo" of checkpoints.
type txPos struct{ Hi, Lo uint64 }

// parseTxPos parses "hi/lo" as projection_checkpoints stores it.
func parseTxPos(s string) (txPos, error) {
	h, l, ok := strings.Cut(s, "/")
	if !ok {
		return txPos{}, fmt.Errorf("position %q: want HI/LO", s)
	}
	hi, err1 := strconv.ParseUint(h, 10, 64)
	lo, err2 := strconv.ParseUint(l, 10, 64)
	if err1 != nil || err2 != nil {
		return txPos{}, fmt.Errorf("position %q: want HI/LO", s)
	}
	return txPos{hi, lo}, nil
}

// Less orders positions as the projectors apply them.
func (p txPos) Less(q txPos) bool { return p.Hi < q.Hi || (p.Hi == q.Hi && p.Lo < q.Lo) }

// checkpointSample is what one poll of projection_checkpoints saw: the
// lowest checkpoint of the read models, and when (the database's clock).
type checkpointSample struct {
	At  time.Time
	Min txPos
}

// appended is an event of the measured phase: where it is and when its
// INSERT started (events.recorded_at, the database's clock).
type appended struct {
	Pos        txPos
	RecordedAt time.Time
}

// checkpointSQL reads the named checkpoints with the time the server
// received the statement: the snapshot the rows come from is taken just
// after it, so an event seen by this poll was visible by At at the latest
// (and was not visible at the previous poll's At).
const checkpointSQL = `SELECT statement_timestamp(), position FROM projection_checkpoints WHERE name = ANY($1)`

// sampleCheckpoints polls the checkpoints of names every period on conn
// until ctx ends, and returns the samples in order.
func sampleCheckpoints(ctx context.Context, conn *pgx.Conn, names []string, period time.Duration) ([]checkpointSample, error) {
	var out []checkpointSample
	for {
		next := time.Now().Add(period)
		s, err := sampleOnce(ctx, conn, names)
		if err != nil {
			if ctx.Err() != nil {
				return out, nil
			}
			return out, err
		}
		out = append(out, s)
		select {
		case <-ctx.Done():
			return out, nil
		case <-time.After(time.Until(next)):
		}
	}
}

func sampleOnce(ctx context.Context, conn *pgx.Conn, names []string) (checkpointSample, error) {
	rows, err := conn.Query(ctx, checkpointSQL, names)
	if err != nil {
		return checkpointSample{}, err
	}
	defer rows.Close()
	var s checkpointSample
	seen := 0
	for rows.Next() {
		var text string
		if err := rows.Scan(&s.At, &text); err != nil {
			return s, err
		}
		p, err := parseTxPos(text)
		if err != nil {
			return s, err
		}
		if seen == 0 || p.Less(s.Min) {
			s.Min = p
		}
		seen++
	}
	if err := rows.Err(); err != nil {
		return s, err
	}
	if seen < len(names) {
		s.Min = txPos{} // a projection without a checkpoint has seen nothing
	}
	return s, nil
}

// projectionLags computes, for each appended event, the time from its
// INSERT to the first sample at which every sampled checkpoint had
// passed it. Samples must be in poll order (checkpoints only advance).
// Events no sample saw are counted in unseen.
func projectionLags(samples []checkpointSample, evs []appended) (lags []time.Duration, unseen int) {
	for _, e := range evs {
		i := sort.Search(len(samples), func(i int) bool { return !samples[i].Min.Less(e.Pos) })
		if i == len(samples) {
			unseen++
			continue
		}
		lags = append(lags, samples[i].At.Sub(e.RecordedAt))
	}
	return lags, unseen
}

// appendedSince reads the events of type after global position from.
func appendedSince(ctx context.Context, conn *pgx.Conn, eventType string, from int64) ([]appended, error) {
	rows, err := conn.Query(ctx, `
		SELECT tx_id::text, global_position, recorded_at FROM events
		WHERE global_position > $1 AND event_type = $2 ORDER BY global_position`, from, eventType)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []appended
	for rows.Next() {
		var (
			tx string
			gp int64
			at time.Time
		)
		if err := rows.Scan(&tx, &gp, &at); err != nil {
			return nil, err
		}
		hi, err := strconv.ParseUint(tx, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("tx_id %q: %w", tx, err)
		}
		out = append(out, appended{Pos: txPos{hi, uint64(gp)}, RecordedAt: at})
	}
	return out, rows.Err()
}

// lastEvent returns the highest global_position and the last event in the
// projectors' order (zero values when there are none).
func lastEvent(ctx context.Context, conn *pgx.Conn) (gp int64, pos txPos, err error) {
	var maxGP *int64
	if err := conn.QueryRow(ctx, `SELECT max(global_position) FROM events`).Scan(&maxGP); err != nil || maxGP == nil {
		return 0, txPos{}, err
	}
	var tx string
	var lo int64
	err = conn.QueryRow(ctx, `SELECT tx_id::text, global_position FROM events
		ORDER BY tx_id DESC, global_position DESC LIMIT 1`).Scan(&tx, &lo)
	if err != nil {
		return 0, txPos{}, err
	}
	hi, err := strconv.ParseUint(tx, 10, 64)
	if err != nil {
		return 0, txPos{}, err
	}
	return *maxGP, txPos{hi, uint64(lo)}, nil
}
