package audit

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events/eventstoretest"
)

func TestSealNowChainsWhatIsNotChainedAndSealsIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := SealNow(ctx, e.store, e.pool, testSealKey); !errors.Is(err, ErrEmptyLog) {
		t.Fatalf("SealNow on an empty log: %v, want ErrEmptyLog", err)
	}
	eventstoretest.AppendCompanies(t, e.store, 7)
	seal, err := SealNow(ctx, e.store, e.pool, testSealKey)
	if err != nil || seal.Seq != 7 || seal.Signature == "" {
		t.Fatalf("SealNow = %+v, %v; want a signed seal at seq 7", seal, err)
	}
	if again, err := SealNow(ctx, e.store, e.pool, testSealKey); err != nil || again != seal {
		t.Fatalf("SealNow with nothing new = %+v, %v; want the same seal", again, err)
	}
	eventstoretest.AppendCompanies(t, e.store, 1)
	next, err := SealNow(ctx, e.store, e.pool, testSealKey)
	if err != nil || next.Seq != 8 {
		t.Fatalf("SealNow after one more event = %+v, %v; want seq 8", next, err)
	}
	if r := verify(t, e, seal, next); !r.OK() || r.Chained != 8 || r.Seals != 4 {
		t.Fatalf("the log after two seals: %+v", r)
	}
}

// A seal the newest seal's key would not verify is refused: stored, it
// would make `verify-log --public-key` report the log as tampered with.
func TestSealNowKeepsToTheKeyOfTheSealsBefore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eventstoretest.AppendCompanies(t, e.store, 1)
	if seal, err := SealNow(ctx, e.store, e.pool, nil); err != nil || seal.Signature != "" {
		t.Fatalf("an unsigned first seal = %+v, %v", seal, err)
	}
	eventstoretest.AppendCompanies(t, e.store, 1)
	if _, err := SealNow(ctx, e.store, e.pool, testSealKey); err != nil {
		t.Fatalf("signing after unsigned seals: %v", err)
	}
	other := ed25519.NewKeyFromSeed([]byte("another-key-another-key-another-"))
	for name, key := range map[string]ed25519.PrivateKey{"no key": nil, "another key": other} {
		eventstoretest.AppendCompanies(t, e.store, 1)
		if _, err := SealNow(ctx, e.store, e.pool, key); !errors.Is(err, ErrSigningKey) {
			t.Errorf("%s after signed seals: %v, want ErrSigningKey", name, err)
		}
	}
	if seal, err := SealNow(ctx, e.store, e.pool, testSealKey); err != nil || seal.Seq != 4 {
		t.Fatalf("the same key = %+v, %v; want a seal at seq 4", seal, err)
	}
}

// errorCounter counts the error records logged.
type errorCounter struct {
	slog.Handler
	n *atomic.Int32
}

func (h errorCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.n.Add(1)
	}
	return nil
}

func (h errorCounter) WithAttrs([]slog.Attr) slog.Handler { return h }

// SealNow and a running sealer take turns: whoever writes second goes on
// from the other's head, so the chain never forks and neither fails.
func TestSealNowTakesTurnsWithARunningSealer(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	var failures atomic.Int32
	logger := slog.New(errorCounter{Handler: quiet.Handler(), n: &failures})
	sealer := NewSealer(e.store, e.pool, logger, SealerOptions{SealEvery: 3, Key: testSealKey, BatchSize: 4, Linger: time.Millisecond})
	done := make(chan struct{})
	go func() { defer close(done); sealer.Run(ctx) }()
	defer func() { cancel(); <-done }()

	var wg sync.WaitGroup
	wg.Go(func() { eventstoretest.AppendCompanies(t, e.store, 200) })
	var seals []Seal
	for range 40 {
		seal, err := SealNow(context.Background(), e.store, e.pool, testSealKey)
		if err != nil && !errors.Is(err, ErrEmptyLog) {
			t.Fatal(err)
		}
		if err == nil {
			seals = append(seals, seal)
		}
	}
	wg.Wait()
	last, err := SealNow(context.Background(), e.store, e.pool, testSealKey)
	if err != nil || last.Seq != 200 {
		t.Fatalf("the last SealNow = %+v, %v; want a seal at seq 200", last, err)
	}
	if r := verify(t, e, append(seals, last)...); !r.OK() || r.Chained != 200 {
		t.Fatalf("the chain written by both: %+v", r)
	}
	if n := failures.Load(); n > 0 {
		t.Fatalf("the sealer failed %d times beside SealNow", n)
	}
}
