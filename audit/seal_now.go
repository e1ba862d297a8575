package audit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// ErrEmptyLog means the log holds no event yet: there is nothing to seal.
var ErrEmptyLog = errors.New("audit: the log holds no event yet, so there is nothing to seal")

// ErrSigningKey means a seal would be stored unsigned, or signed by another
// key, after seals signed by one key: `verify-log --public-key` with that
// key would then reject it as if the log had been tampered with.
var ErrSigningKey = errors.New("audit: a new seal must be signed with the key of the seals before it")

// SealNow seals the log as it stands now, for `audit seal`: it chains the
// events the sealer has not chained yet, through the sealer's own write
// path (so it takes turns with a running sealer, and the chain cannot
// fork), seals the chain's head, signed with key when set, and returns the
// seal. The seal is stored like the sealer's. When the newest stored seal
// already covers the whole log, it returns that one. ErrEmptyLog when the
// log is empty; ErrSigningKey when the newest stored seal is signed and key
// is not that seal's key.
func SealNow(ctx context.Context, store events.Store, pool *pgxpool.Pool, key ed25519.PrivateKey) (Seal, error) {
	w := chainWriter{pool: pool, key: key}
	for {
		head, err := catchUp(ctx, store, w)
		switch {
		case err != nil:
			return Seal{}, err
		case head.seq == 0:
			return Seal{}, ErrEmptyLog
		case head.sealedSeq == head.seq:
			return LatestSeal(ctx, pool) // the newest seal covers the log already
		}
		if err := checkSigningKey(ctx, pool, key); err != nil {
			return Seal{}, err
		}
		_, seal, err := w.commit(ctx, head, nil, time.Now().UTC().Truncate(time.Microsecond))
		if !errors.Is(err, errChainMoved) {
			return seal, err
		}
		// The sealer chained or sealed meanwhile: catch up again.
	}
}

// catchUp chains the log from the chain's head to the end it had when the
// last page read came back short, and returns the new head.
func catchUp(ctx context.Context, store events.Store, w chainWriter) (chainHead, error) {
	head, err := loadChainHead(ctx, w.pool)
	if err != nil {
		return head, err
	}
	for {
		page, err := store.ReadAll(ctx, head.position, defaultBatchSize)
		if err != nil {
			return head, fmt.Errorf("read the log after %s: %w", head.position, err)
		}
		next, _, err := w.commit(ctx, head, page, time.Time{})
		if errors.Is(err, errChainMoved) { // the sealer went first: go on from its head
			if head, err = loadChainHead(ctx, w.pool); err != nil {
				return head, err
			}
			continue
		}
		if err != nil || len(page) < defaultBatchSize {
			return next, err
		}
		head = next
	}
}

// checkSigningKey returns ErrSigningKey when the newest stored seal is
// signed and key is not its key.
func checkSigningKey(ctx context.Context, pool *pgxpool.Pool, key ed25519.PrivateKey) error {
	latest, err := LatestSeal(ctx, pool)
	if errors.Is(err, ErrNoSeal) {
		return nil
	}
	if err != nil || latest.PublicKey == "" {
		return err
	}
	if key != nil && latest.PublicKey == base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)) {
		return nil
	}
	return fmt.Errorf("%w: the newest stored seal (seq %d) is signed by public key %s", ErrSigningKey, latest.Seq, latest.PublicKey)
}
