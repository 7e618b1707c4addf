package leaderboard

import (
	"context"
	"sync"

	"github.com/redis/rueidis"
)

// pipelineWriter sends a rebuild's pipelines to Redis from goroutines of its
// own, so that reading the store and writing Redis overlap: without it the
// reader waits while Redis inserts and Redis idles while the reader decodes
// rows and builds commands (BENCHMARKS.md). Commands of one rebuild touch
// distinct members, so their pipelines may land in any order.
type pipelineWriter struct {
	work   chan rueidis.Commands
	ctx    context.Context // cancelled by stop, or on the first error
	cancel context.CancelFunc
	failed chan struct{} // closed on the first error, after err is set
	once   sync.Once
	err    error
	wg     sync.WaitGroup
	closed bool
}

// startPipelineWriter starts n goroutines, each sending one pipeline at a
// time: n pipelines at most are on their way while the caller builds the
// next.
func (lb *Leaderboard) startPipelineWriter(ctx context.Context, n int) *pipelineWriter {
	w := &pipelineWriter{work: make(chan rueidis.Commands), failed: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(ctx)
	w.wg.Add(n)
	for range n {
		go func() {
			defer w.wg.Done()
			for cmds := range w.work {
				if w.ctx.Err() != nil {
					w.fail(w.ctx.Err())
					continue // drain: the caller stops sending
				}
				for _, r := range lb.client.DoMulti(w.ctx, cmds...) {
					if err := r.Error(); err != nil {
						w.fail(err)
						break
					}
				}
			}
		}()
	}
	return w
}

func (w *pipelineWriter) fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.failed)
		w.cancel() // the other writers' round trips are moot now
	})
}

// send hands cmds to a writer, waiting while all of them are busy. It
// returns the first error a writer met, or the context's.
func (w *pipelineWriter) send(cmds rueidis.Commands) error {
	select {
	case <-w.failed:
		return w.err
	default:
	}
	select {
	case w.work <- cmds:
		return nil
	case <-w.failed:
		return w.err
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// finish waits until every pipeline sent has been answered and returns the
// first error.
func (w *pipelineWriter) finish() error {
	if !w.closed {
		w.closed = true
		close(w.work)
	}
	w.wg.Wait()
	select {
	case <-w.failed:
		return w.err
	default:
		return w.ctx.Err() // nil unless the caller's context ended
	}
}

// stop ends the writers without waiting for what is still queued to be
// worth anything (the rebuild failed); it returns once they are gone.
func (w *pipelineWriter) stop() {
	w.cancel()
	_ = w.finish()
}
