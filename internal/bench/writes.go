package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The phases of `make bench` after the reads: the other writes (company
// update, issue, credit note, payment) and the document renders.

// errNoDrafts ends the issue phase early: every draft has been issued.
var errNoDrafts = errors.New("no draft left to issue")

// updateCompaniesOp patches the legal name of the client's own company,
// alternating between two names, so that every request is a change.
func updateCompaniesOp(c *client, companies []string) op {
	run := randomHex(4)
	var n atomic.Int64
	return func(ctx context.Context, w, seq int) error {
		name := fmt.Sprintf("Benchmark Update %02d GmbH", w)
		if seq%2 == 1 {
			name = fmt.Sprintf("Benchmark Update %02d AG", w)
		}
		body, _ := json.Marshal(map[string]string{"legal_name": name})
		_, err := c.send(ctx, http.MethodPatch, "/v1/companies/"+companies[w%len(companies)], body,
			fmt.Sprintf("bench-%s-update-%d", run, n.Add(1)), http.StatusOK)
		return err
	}
}

// issuer issues the drafts in order, each once; when none is left it
// returns errNoDrafts (the phase stops there, see runUntil). Issued
// invoices are appended to issued.
type issuer struct {
	c      *client
	drafts []created
	next   atomic.Int64
	mu     sync.Mutex
	issued []created
	run    string
}

func (is *issuer) left() bool { return is.next.Load() < int64(len(is.drafts)) }

func (is *issuer) op(ctx context.Context, _, _ int) error {
	k := is.next.Add(1) - 1
	if k >= int64(len(is.drafts)) {
		return errNoDrafts
	}
	inv := is.drafts[k]
	_, err := is.c.send(ctx, http.MethodPost, "/v1/companies/"+inv.company+"/invoices/"+inv.invoice+"/issue", []byte("{}"),
		fmt.Sprintf("bench-%s-issue-%d", is.run, k), http.StatusOK)
	if err != nil {
		return err
	}
	is.mu.Lock()
	is.issued = append(is.issued, inv)
	is.mu.Unlock()
	return nil
}

// perClient deals the invoices out to the clients, so that no two clients
// write to the same invoice (their writes would conflict, not queue).
func perClient(invs []created, clients int) [][]created {
	out := make([][]created, clients)
	for i, inv := range invs {
		out[i%clients] = append(out[i%clients], inv)
	}
	return out
}

// creditRate is the tax rate of the invoice's lines with the largest net
// amount, so that a credit note at that rate always fits.
func creditRate(seed uint64) int64 {
	sum := map[int64]int64{}
	for _, l := range lines(seed, 5) {
		sum[l.TaxRateBps] += l.UnitAmountMinor
	}
	var best, rate int64
	for r, s := range sum {
		if s > best || (s == best && r > rate) {
			best, rate = s, r
		}
	}
	return rate
}

// creditNoteOp credits one line of 1 minor unit on the client's issued
// invoices in turn: thousands fit on each before its total is reached.
func creditNoteOp(c *client, issued [][]created) op {
	run := randomHex(4)
	var n atomic.Int64
	return func(ctx context.Context, w, seq int) error {
		mine := issued[w]
		inv := mine[seq%len(mine)]
		body, _ := json.Marshal(map[string]any{
			"reason": "Benchmark correction",
			"lines": []lineSpec{{Description: "Correction", Quantity: "1", Unit: "h", UnitAmountMinor: 1,
				TaxRateBps: creditRate(inv.seed)}},
		})
		_, err := c.send(ctx, http.MethodPost, "/v1/companies/"+inv.company+"/invoices/"+inv.invoice+"/credit_notes", body,
			fmt.Sprintf("bench-%s-credit-%d", run, n.Add(1)), http.StatusCreated)
		return err
	}
}

// paymentOp records payments of 1 minor unit on the client's issued
// invoices in turn.
func paymentOp(c *client, issued [][]created) op {
	run := randomHex(4)
	var n atomic.Int64
	body, _ := json.Marshal(map[string]any{"amount_minor": 1, "paid_on": time.Now().UTC().Format(time.DateOnly)})
	return func(ctx context.Context, w, seq int) error {
		mine := issued[w]
		inv := mine[seq%len(mine)]
		_, err := c.send(ctx, http.MethodPost, "/v1/companies/"+inv.company+"/invoices/"+inv.invoice+"/payments", body,
			fmt.Sprintf("bench-%s-payment-%d", run, n.Add(1)), http.StatusCreated)
		return err
	}
}

// documentOp GETs a random issued invoice's document at suffix
// ("/einvoice?syntax=ubl", "/pdf").
func documentOp(c *client, issued []created, clients int, suffix string) op {
	rngs := workerRands(clients, 4)
	return func(ctx context.Context, w, _ int) error {
		inv := issued[rngs[w].IntN(len(issued))]
		return c.expect(ctx, http.MethodGet, "/v1/companies/"+inv.company+"/invoices/"+inv.invoice+suffix, http.StatusOK)
	}
}

type phaseFunc func(name string, op op, warmup bool) (phaseRow, error)
type phaseWhileFunc func(name string, op op, warmup bool, while func() bool) (phaseRow, error)

// runWritePhases runs the phases after the reads, all at cfg.Clients:
// company update, issue (of the create phase's drafts), credit note and
// payment (on the issued invoices), then the three document renders.
func runWritePhases(ctx context.Context, cfg serviceBenchConfig, c *client, s *seeded, phase phaseFunc, phaseWhile phaseWhileFunc) ([]phaseRow, error) {
	out := cfg.Out
	// Setup: a company per client for the updates.
	run := randomHex(4)
	own := make([]string, cfg.Clients)
	for i := range own {
		b, err := c.send(ctx, http.MethodPost, "/v1/companies", companyBody(100+i), fmt.Sprintf("bench-%s-own-company-%d", run, i), http.StatusCreated)
		if err != nil {
			return nil, fmt.Errorf("creating the update phase's companies: %w", err)
		}
		if own[i], err = id(b); err != nil {
			return nil, err
		}
	}
	var rows []phaseRow
	update, err := phase("update company (PATCH name)", updateCompaniesOp(c, own), true)
	if err != nil {
		return nil, err
	}
	rows = append(rows, update)

	// Issue: the create phase's drafts (its warm-up's too), each once, no
	// warm-up (it would use drafts up); the phase ends early if they run out.
	s.mu.Lock()
	is := &issuer{c: c, drafts: append([]created(nil), s.invoices...), run: run}
	s.mu.Unlock()
	issue, err := phaseWhile("issue (a draft of the create phase)", is.op, false, is.left)
	if err != nil {
		return nil, err
	}
	rows = append(rows, issue)
	if !is.left() {
		fmt.Fprintf(out, "  issue: every one of the %d drafts issued after %.1fs\n", len(is.drafts), issue.elapsed.Seconds())
	}
	if len(is.issued) < cfg.Clients {
		return rows, fmt.Errorf("only %d invoices issued, fewer than the %d clients of the credit note and payment phases", len(is.issued), cfg.Clients)
	}
	dealt := perClient(is.issued, cfg.Clients)
	for _, p := range []struct {
		name string
		op   op
	}{
		{"credit note (1 line of 1 minor unit)", creditNoteOp(c, dealt)},
		{"payment (1 minor unit)", paymentOp(c, dealt)},
		{"GET einvoice UBL", documentOp(c, is.issued, cfg.Clients, "/einvoice?syntax=ubl")},
		{"GET einvoice CII", documentOp(c, is.issued, cfg.Clients, "/einvoice?syntax=cii")},
		{"GET pdf", documentOp(c, is.issued, cfg.Clients, "/pdf")},
	} {
		r, err := phase(p.name, p.op, true)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}
