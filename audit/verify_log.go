package audit

import (
	"bufio"
	"cmp"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// LogReport is what a verification of the log found.
type LogReport struct {
	Events  int // events in the log now
	Chained int // links recorded for them
	Seals   int // seals checked
	// Problems lists the first discrepancy each check found (the recorded
	// chain, each seal), earliest sequence number first; none when the
	// log is intact.
	Problems []Discrepancy
}

// OK reports whether the log agrees with everything recorded of it.
func (r LogReport) OK() bool { return len(r.Problems) == 0 }

// First returns the earliest discrepancy.
func (r LogReport) First() (Discrepancy, bool) {
	if len(r.Problems) == 0 {
		return Discrepancy{}, false
	}
	return r.Problems[0], true
}

// VerifyLinks checks the links recomputed from the log now against the
// recorded links and every seal: each seal's signature (with trusted as the
// only key accepted when given) and the chain it states.
func VerifyLinks(now, recorded []ChainLink, seals []Seal, trusted ed25519.PublicKey) LogReport {
	r := LogReport{Events: len(now), Chained: len(recorded), Seals: len(seals)}
	if d := CompareChain(now, recorded); d != nil {
		r.Problems = append(r.Problems, *d)
	}
	for _, seal := range seals {
		if err := seal.Verify(trusted); err != nil {
			r.Problems = append(r.Problems, Discrepancy{Seq: seal.Seq, Kind: DiffSeal, Detail: "rejected: " + err.Error()})
			continue
		}
		if d := CheckSeal(now, seal); d != nil {
			r.Problems = append(r.Problems, *d)
		}
	}
	slices.SortStableFunc(r.Problems, func(a, b Discrepancy) int { return cmp.Compare(a.Seq, b.Seq) })
	return r
}

// VerifyExport checks a complete export (JSON lines, as `events export`
// prints them, from the first event) without a database: it recomputes the
// chain from the lines and checks it against the links the lines carry and
// against seals, as VerifyLinks does.
func VerifyExport(r io.Reader, seals []Seal, trusted ed25519.PublicKey) (LogReport, error) {
	now, recorded, err := linksOfExport(r)
	if err != nil {
		return LogReport{}, err
	}
	return VerifyLinks(now, recorded, seals, trusted), nil
}

// linksOfExport recomputes the chain of a complete export and collects the
// links its lines recorded.
func linksOfExport(r io.Reader) (now, recorded []ChainLink, err error) {
	var b ChainBuilder
	scan := bufio.NewScanner(r)
	scan.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for scan.Scan() {
		var line ExportLine
		if err := json.Unmarshal(scan.Bytes(), &line); err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", len(b.Links())+1, err)
		}
		ev, err := line.Event()
		if err != nil {
			return nil, nil, err
		}
		if _, err := b.Add(ev); err != nil {
			return nil, nil, err
		}
		link, ok, err := line.Link()
		if err != nil {
			return nil, nil, err
		}
		if ok {
			recorded = append(recorded, link)
		}
	}
	return b.Links(), recorded, scan.Err()
}
