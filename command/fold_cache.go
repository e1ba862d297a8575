package command

import (
	"container/list"
	"hash/maphash"
	"sync"

	"github.com/invoicing/invoicing/events"
)

// A lifecycle write decides on its record as the record's whole stream
// folds, and checks the whole stream for its idempotency key: a company
// updated ten thousand times would be read and decoded ten thousand events
// deep on every update. The fold cache keeps, for the longest streams
// this instance has written to, the fold at some revision and a hash of
// every idempotency key up to it, so that the next write reads only the
// events after that revision (Store.ReadStreamFrom).
//
// It cannot go stale: the events up to a fold's revision never change,
// whichever instance appends after them, and the write still appends at
// the revision it decided on. A key whose hash it holds (the request may
// be a replay, or two keys collide in 64 bits) sends the write back to the
// whole stream, which answers exactly.

// DefaultFoldCacheKeys bounds the keys the fold cache holds, over all its
// streams (about 32 bytes each): least recently used streams go first, and
// a stream with more is not kept.
const DefaultFoldCacheKeys = 1 << 18

// minFoldedEvents is the shortest stream the cache keeps: a shorter one is
// read whole about as fast as its tail.
const minFoldedEvents = 32

type foldCache struct {
	mu      sync.Mutex
	seed    maphash.Seed
	streams map[string]*list.Element // of *foldEntry, most recent first
	order   *list.List
	keys    int // held by every entry together
	maxKeys int
}

// foldEntry is one stream's fold: the state at last's revision, and the
// hash of the idempotency key of every event up to it.
type foldEntry struct {
	stream string
	state  any
	last   events.RecordedEvent // without payload: the position and type a replay waits for
	keys   map[uint64]struct{}
}

// folded is what a lookup hands out: the entry's state and last event, as
// they were (an entry's keys change in place under the lock; these do not).
type folded struct {
	state any
	last  events.RecordedEvent
}

func newFoldCache(maxKeys int) *foldCache {
	return &foldCache{seed: maphash.MakeSeed(), streams: map[string]*list.Element{}, order: list.New(), maxKeys: maxKeys}
}

func (c *foldCache) hash(keyHash string) uint64 { return maphash.String(c.seed, keyHash) }

// hashes are the hashed keys of mds, leaving out the events no lifecycle
// request appended (a create's: its key names the stream).
func (c *foldCache) hashes(mds []events.Metadata) []uint64 {
	keys := make([]uint64, 0, len(mds))
	for _, md := range mds {
		if md.IdempotencyKey != "" {
			keys = append(keys, c.hash(md.IdempotencyKey))
		}
	}
	return keys
}

// lookup returns stream's fold, unless the cache has none or may hold key
// in it.
func (c *foldCache) lookup(stream string, key uint64) (folded, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.streams[stream]
	if !ok {
		return folded{}, false
	}
	e := el.Value.(*foldEntry)
	if _, seen := e.keys[key]; seen {
		return folded{}, false
	}
	c.order.MoveToFront(el)
	return folded{state: e.state, last: e.last}, true
}

// store records stream's fold at last. keys are the hashed keys of the
// events from revision from to last: they extend the keys the cache holds
// for the events before from, and when it holds none of those (from 0:
// the fold read the whole stream) they are the stream's keys. A fold that
// would leave a revision's key out (the entry was dropped, or is older
// than from) is not kept, and one older than the held fold only adds its
// keys.
func (c *foldCache) store(stream string, state any, last events.RecordedEvent, from uint64, keys []uint64) {
	if c.maxKeys <= 0 {
		return
	}
	last.Data, last.Metadata = nil, nil
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.streams[stream]
	switch {
	case ok && el.Value.(*foldEntry).last.Revision+1 >= from:
	case from > 0:
		return
	case ok:
		c.keys -= len(el.Value.(*foldEntry).keys)
		el.Value = &foldEntry{stream: stream, keys: make(map[uint64]struct{}, len(keys))}
	default:
		el = c.order.PushFront(&foldEntry{stream: stream, keys: make(map[uint64]struct{}, len(keys))})
		c.streams[stream] = el
	}
	e := el.Value.(*foldEntry)
	for _, k := range keys {
		if _, seen := e.keys[k]; !seen {
			e.keys[k] = struct{}{}
			c.keys++
		}
	}
	if e.state == nil || last.Revision > e.last.Revision {
		e.state, e.last = state, last
	}
	if len(e.keys) > c.maxKeys {
		c.remove(el) // alone over the bound: the others stay
		return
	}
	c.order.MoveToFront(el)
	c.evict()
}

// evict drops the least recently used streams until the keys fit.
func (c *foldCache) evict() {
	for c.keys > c.maxKeys {
		c.remove(c.order.Back())
	}
}

func (c *foldCache) remove(el *list.Element) {
	e := el.Value.(*foldEntry)
	c.order.Remove(el)
	delete(c.streams, e.stream)
	c.keys -= len(e.keys)
}
