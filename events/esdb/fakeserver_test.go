package esdb_test

import (
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	api "github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/invoicing/invoicing/events"
	esdbstore "github.com/invoicing/invoicing/events/esdb"
	"github.com/invoicing/invoicing/events/eventstoretest"
)

// TestConformanceOnAFakeServer runs the suite through the real client
// against the fake below, one server for all subtests as with EventStoreDB,
// with every subscription dropped after 25 events.
func TestConformanceOnAFakeServer(t *testing.T) {
	url := "esdb://" + startFakeServer(t, 25) + "?tls=false"
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	eventstoretest.Run(t, func(t *testing.T) events.Store {
		s, err := esdbstore.Open(t.Context(), url, logger)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// fakeServer speaks enough of EventStoreDB's gRPC Streams service for the
// adapter's own code paths to run end to end through the real client: it is
// no stand-in for the server's semantics, which only a real server (see
// conformance_test.go) can vouch for. Where it must choose, it mimics the
// server's known awkward behaviour or something worse:
//   - an append whose event ids are already in place is acknowledged,
//     whatever the bodies (ids alone decide, as in EventStoreDB);
//   - an append reply's prepare position names the write's first event;
//   - $all holds system events between the service's;
//   - subscriptions include their start position and drop after dropEvery
//     events, so that resubscribing and de-duplication are exercised.
type fakeServer struct {
	api.UnimplementedStreamsServer
	dropEvery int

	mu      sync.Mutex
	log     []fakeRecord
	streams map[string][]int // indexes into log
	changed chan struct{}    // closed and replaced on every append
}

type fakeRecord struct {
	stream   string
	revision uint64
	id       uuid.UUID
	typ      string
	data, md []byte
	pos      uint64
	created  int64 // .NET ticks since the Unix epoch, as the server sends
}

// startFakeServer serves on a loopback port and returns its address.
func startFakeServer(t *testing.T, dropEvery int) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{dropEvery: dropEvery, streams: map[string][]int{}, changed: make(chan struct{})}
	f.appendSystemEvent()
	srv := grpc.NewServer()
	api.RegisterStreamsServer(srv, f)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// appendSystemEvent adds the kind of record the server writes by itself.
func (f *fakeServer) appendSystemEvent() {
	f.log = append(f.log, fakeRecord{stream: "$stats-node", typ: "$statsCollected", id: uuid.New(),
		data: []byte(`{}`), pos: f.nextPos(), created: time.Now().UnixNano() / 100})
}

func (f *fakeServer) nextPos() uint64 { return uint64(len(f.log)+1) * 128 }

func (f *fakeServer) Append(s api.Streams_AppendServer) error {
	head, err := s.Recv()
	if err != nil {
		return err
	}
	opts := head.GetOptions()
	var msgs []*api.AppendReq_ProposedMessage
	for {
		req, err := s.Recv()
		if err != nil {
			break // io.EOF once the client has sent everything
		}
		msgs = append(msgs, req.GetProposedMessage())
	}
	return s.SendAndClose(f.append(string(opts.GetStreamIdentifier().GetStreamName()), opts, msgs))
}

func (f *fakeServer) append(stream string, opts *api.AppendReq_Options, msgs []*api.AppendReq_ProposedMessage) *api.AppendResp {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx := f.streams[stream]
	first := uint64(0) // revision the first event would take
	switch {
	case opts.GetNoStream() != nil:
	case opts.GetAny() == nil:
		first = opts.GetRevision() + 1
	}
	if ok := f.idempotent(idx, first, msgs); ok {
		last := f.log[idx[first+uint64(len(msgs))-1]]
		return success(last.revision, last.pos, last.pos)
	}
	if uint64(len(idx)) != first {
		return &api.AppendResp{Result: &api.AppendResp_WrongExpectedVersion_{WrongExpectedVersion: &api.AppendResp_WrongExpectedVersion{}}}
	}
	var firstPos uint64
	for i, m := range msgs {
		most, least := m.GetId().GetStructured().GetMostSignificantBits(), m.GetId().GetStructured().GetLeastSignificantBits()
		id, _ := esdb.ParseUUIDFromInt64(most, least)
		r := fakeRecord{stream: stream, revision: first + uint64(i), id: id, typ: m.GetMetadata()["type"],
			data: m.GetData(), md: m.GetCustomMetadata(), pos: f.nextPos(), created: time.Now().UnixNano() / 100}
		if i == 0 {
			firstPos = r.pos
		}
		f.log = append(f.log, r)
		f.streams[stream] = append(f.streams[stream], len(f.log)-1)
	}
	last := f.log[len(f.log)-1]
	if len(f.log)%5 == 0 {
		f.appendSystemEvent()
	}
	close(f.changed)
	f.changed = make(chan struct{})
	return success(last.revision, last.pos, firstPos)
}

// idempotent reports whether the stream already holds events with these
// ids from revision first on: EventStoreDB then acknowledges the append
// without writing, bodies unexamined.
func (f *fakeServer) idempotent(idx []int, first uint64, msgs []*api.AppendReq_ProposedMessage) bool {
	if first+uint64(len(msgs)) > uint64(len(idx)) {
		return false
	}
	for i, m := range msgs {
		s := m.GetId().GetStructured()
		id, _ := esdb.ParseUUIDFromInt64(s.GetMostSignificantBits(), s.GetLeastSignificantBits())
		if f.log[idx[first+uint64(i)]].id != id {
			return false
		}
	}
	return true
}

func success(revision, commit, prepare uint64) *api.AppendResp {
	return &api.AppendResp{Result: &api.AppendResp_Success_{Success: &api.AppendResp_Success{
		CurrentRevisionOption: &api.AppendResp_Success_CurrentRevision{CurrentRevision: revision},
		PositionOption: &api.AppendResp_Success_Position{Position: &api.AppendResp_Position{
			CommitPosition: commit, PreparePosition: prepare}},
	}}}
}

func (f *fakeServer) Read(req *api.ReadReq, s api.Streams_ReadServer) error {
	o := req.GetOptions()
	switch {
	case o.GetSubscription() != nil:
		return f.subscribe(o, s)
	case o.GetStream() != nil:
		return f.readStream(o, s)
	}
	return f.readAll(o, s)
}

func (f *fakeServer) readStream(o *api.ReadReq_Options, s api.Streams_ReadServer) error {
	name := o.GetStream().GetStreamIdentifier().GetStreamName()
	f.mu.Lock()
	var out []fakeRecord
	idx := f.streams[string(name)]
	for _, i := range idx[min(int(o.GetStream().GetRevision()), len(idx)):] {
		out = append(out, f.log[i])
	}
	if o.GetReadDirection() == api.ReadReq_Options_Backwards { // only from the end, as ReadLast reads
		out = nil
		for j := len(idx) - 1; j >= 0; j-- {
			out = append(out, f.log[idx[j]])
		}
	}
	f.mu.Unlock()
	if len(idx) == 0 {
		return s.Send(&api.ReadResp{Content: &api.ReadResp_StreamNotFound_{StreamNotFound: &api.ReadResp_StreamNotFound{
			StreamIdentifier: &shared.StreamIdentifier{StreamName: name}}}})
	}
	return sendRecords(s, out, o.GetCount())
}

func (f *fakeServer) readAll(o *api.ReadReq_Options, s api.Streams_ReadServer) error {
	f.mu.Lock()
	recs := append([]fakeRecord(nil), f.log...)
	f.mu.Unlock()
	if o.GetReadDirection() == api.ReadReq_Options_Backwards {
		return sendRecords(s, recs[max(0, len(recs)-int(o.GetCount())):], o.GetCount())
	}
	from := o.GetAll().GetPosition().GetCommitPosition()
	var out []fakeRecord
	for _, r := range recs {
		if r.pos >= from { // reads of $all include their start
			out = append(out, r)
		}
	}
	return sendRecords(s, out, o.GetCount())
}

func (f *fakeServer) subscribe(o *api.ReadReq_Options, s api.Streams_ReadServer) error {
	re := regexp.MustCompile(o.GetFilter().GetEventType().GetRegex())
	if err := s.Send(&api.ReadResp{Content: &api.ReadResp_Confirmation{Confirmation: &api.ReadResp_SubscriptionConfirmation{SubscriptionId: "fake"}}}); err != nil {
		return err
	}
	next, sent := o.GetAll().GetPosition().GetCommitPosition(), 0
	for {
		f.mu.Lock()
		recs, changed := append([]fakeRecord(nil), f.log...), f.changed
		f.mu.Unlock()
		for _, r := range recs {
			if r.pos < next || !re.MatchString(r.typ) {
				continue
			}
			if f.dropEvery > 0 && sent == f.dropEvery {
				return status.Error(codes.Unavailable, "fake drop")
			}
			if err := s.Send(readResp(r)); err != nil {
				return err
			}
			next, sent = r.pos+1, sent+1
		}
		last := recs[len(recs)-1].pos
		cp := &api.ReadResp_Checkpoint{CommitPosition: last, PreparePosition: last}
		if err := s.Send(&api.ReadResp{Content: &api.ReadResp_Checkpoint_{Checkpoint: cp}}); err != nil {
			return err
		}
		select {
		case <-changed:
		case <-s.Context().Done():
			return s.Context().Err()
		}
	}
}

func sendRecords(s api.Streams_ReadServer, recs []fakeRecord, count uint64) error {
	for i, r := range recs {
		if uint64(i) == count {
			break
		}
		if err := s.Send(readResp(r)); err != nil {
			return err
		}
	}
	return nil
}

func readResp(r fakeRecord) *api.ReadResp {
	most, least := esdb.UUIDAsInt64(r.id)
	return &api.ReadResp{Content: &api.ReadResp_Event{Event: &api.ReadResp_ReadEvent{
		Event: &api.ReadResp_ReadEvent_RecordedEvent{
			Id:               &shared.UUID{Value: &shared.UUID_Structured_{Structured: &shared.UUID_Structured{MostSignificantBits: most, LeastSignificantBits: least}}},
			StreamIdentifier: &shared.StreamIdentifier{StreamName: []byte(r.stream)},
			StreamRevision:   r.revision,
			CommitPosition:   r.pos,
			PreparePosition:  r.pos,
			Metadata:         map[string]string{"type": r.typ, "content-type": "application/json", "created": strconv.FormatInt(r.created, 10)},
			CustomMetadata:   r.md,
			Data:             r.data,
		},
		Position: &api.ReadResp_ReadEvent_CommitPosition{CommitPosition: r.pos},
	}}}
}

// Keep the compiler honest about the interface the fake implements.
var _ api.StreamsServer = (*fakeServer)(nil)
