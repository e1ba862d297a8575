package pgstore_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// BenchmarkAppend compares few appenders with many. With serialised appends
// both would top out at one commit per commit latency; here concurrent
// appends share the server's commit throughput. (The test cluster runs with
// fsync off, so absolute numbers understate a real disk's commit latency and
// so the gain from concurrency.)
//
//	go test -run '^$' -bench Append -benchtime 3000x ./events/pgstore/
func BenchmarkAppend(b *testing.B) {
	for _, parallelism := range []int{1, 16} {
		writers := parallelism * runtime.GOMAXPROCS(0)
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			store, _ := newStore(b)
			var n atomic.Int64
			b.SetParallelism(parallelism)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					stream := fmt.Sprintf("company-bench-%d", n.Add(1))
					if _, err := store.Append(context.Background(), stream, events.NoStream(), eventData(stream, 0)); err != nil {
						b.Error(err)
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}
