package testredis

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// OneConn is a client with one auto-pipelined connection a node, for a
// test that restarts a server or has it close the client's connections
// (CLIENT KILL) and then writes: Redial can then reach every connection
// a call may take.
//
// Why a test needs it: a connection that Redis closed fails its next use
// on the network, unless rueidis saw the close first (a reader running on
// it, its ping). rueidis sends a read again then, on a new connection,
// but never a write, which may have applied: the write fails, as it
// should, and the test fails for a reason that is not the one it tests,
// depending on which connection the write took. rueidis spreads keyed
// commands over PipelineMultiplex connections at random, and a PING,
// which has no key, always takes the first: with more than one, no
// command of the test's can be sent on each.
type OneConn struct{ rueidis.Client }

// NewOneConn builds a client of opt with one auto-pipelined connection a
// node (PipelineMultiplex -1), closed when the test ends.
func NewOneConn(t testing.TB, opt rueidis.ClientOption) OneConn {
	t.Helper()
	opt.PipelineMultiplex = -1
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatalf("client of %v: %v", opt.InitAddress, err)
	}
	t.Cleanup(c.Close)
	return OneConn{c}
}

// Redial has every node's connection dialled again after a restart or a
// drop, before the test's next write: a PING to every node until each
// answers (a PING that a closed connection fails has rueidis dial that
// connection again, and sends it again there). Pinned, so that rueidis
// does not recycle a PING that a broken connection's writer may still be
// reading (rueidis v1.0.79 recycles a call's commands when the call
// fails on a broken connection, while the connection's background writer
// can still read them: the race detector reports it, once in about 25
// runs, when the first calls after a drop are the board's own).
//
// It reaches the auto-pipelined connections alone, not those idle in
// rueidis's dedicated pool, which a board's calls do not take (the board
// sends no pipeline as long as rueidis's BlockingPipeline).
func (c OneConn) Redial(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := c.ping(ctx)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redial: a node does not answer PING: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ping sends a pinned PING to every node and returns the first error.
func (c OneConn) ping(ctx context.Context) error {
	for _, n := range c.Nodes() {
		if err := n.Do(ctx, n.B().Ping().Build().Pin()).Error(); err != nil {
			return err
		}
	}
	return nil
}
