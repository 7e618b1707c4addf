package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
)

// chunkRecorder records the length of every DoMulti that reaches the
// caller's client, and fails the DoMulti numbered failAt (from 1) on the
// network, as a broken connection does.
type chunkRecorder struct {
	rueidis.Client
	mu     sync.Mutex
	sizes  []int
	failAt int
}

func (c *chunkRecorder) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.mu.Lock()
	c.sizes = append(c.sizes, len(cmds))
	n := len(c.sizes)
	c.mu.Unlock()
	if n == c.failAt {
		res := make([]rueidis.RedisResult, len(cmds))
		for i := range res {
			res[i] = rueidis.NewErrorResult(errBrokenPipe)
		}
		return res
	}
	return c.Client.DoMulti(ctx, cmds...)
}

var errBrokenPipe = errors.New("write: broken pipe")

func chunkClient(t *testing.T) *chunkRecorder {
	mr := miniredis.RunT(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return &chunkRecorder{Client: c}
}

// incrs is n INCRs of key, with a MULTI..EXEC of tx INCRs from position at
// (none when tx is 0).
func incrs(b rueidis.Builder, key string, n, at, tx int) rueidis.Commands {
	var cmds rueidis.Commands
	for i := 0; i < n; i++ {
		if i == at && tx > 0 {
			cmds = append(cmds, b.Multi().Build())
			for range tx {
				cmds = append(cmds, b.Incr().Key(key).Build())
			}
			cmds = append(cmds, b.Exec().Build())
		}
		cmds = append(cmds, b.Incr().Key(key).Build())
	}
	return cmds
}

// TestChunkedDoMulti: the board's client sends a pipeline of more than
// pipeChunk commands (not all reads) in DoMultis of at most pipeChunk, in
// order, a MULTI..EXEC whole (alone when it is longer than pipeChunk),
// and the replies in the commands' order; a pipeline of reads, which
// rueidis sends again itself, goes whole; a short one goes as it is; after
// a DoMulti that failed on the network nothing more is sent.
func TestChunkedDoMulti(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		n, at, tx int
		sizes     []int
	}{
		{n: 1000, sizes: []int{1000}},
		{n: 2500, sizes: []int{1000, 1000, 500}},
		{n: 2500, at: 990, tx: 20, sizes: []int{990, 1000, 532}},
		{n: 2500, at: 0, tx: 1200, sizes: []int{1202, 1000, 1000, 500}},
		{n: 2500, at: 500, tx: 1200, sizes: []int{500, 1202, 1000, 1000}},
	} {
		t.Run(fmt.Sprintf("n=%d tx=%d@%d", tc.n, tc.tx, tc.at), func(t *testing.T) {
			rec := chunkClient(t)
			c := resending{rec}
			res := c.DoMulti(ctx, incrs(c.B(), "k", tc.n, tc.at, tc.tx)...)
			require.Equal(t, tc.sizes, rec.sizes)
			want := int64(0)
			for _, r := range res {
				switch v, err := r.ToMessage(); {
				case err != nil:
					t.Fatal(err)
				case v.IsString(): // MULTI's OK, a queued command's QUEUED
				case v.IsArray(): // EXEC: the transaction's INCRs in turn
					vs, err := v.AsIntSlice()
					require.NoError(t, err)
					for _, x := range vs {
						want++
						require.Equal(t, want, x)
					}
				default:
					x, err := v.AsInt64()
					require.NoError(t, err)
					want++
					require.Equal(t, want, x)
				}
			}
			require.Equal(t, int64(tc.n+tc.tx), want)
		})
	}
	t.Run("reads whole", func(t *testing.T) {
		rec := chunkClient(t)
		c := resending{rec}
		cmds := make(rueidis.Commands, 2500)
		for i := range cmds {
			cmds[i] = c.B().Get().Key("k").Build()
		}
		c.DoMulti(ctx, cmds...)
		require.Equal(t, []int{2500}, rec.sizes)
	})
	t.Run("network failure ends it", func(t *testing.T) {
		rec := chunkClient(t)
		rec.failAt = 2
		c := resending{rec}
		res := c.DoMulti(ctx, incrs(c.B(), "k", 3500, 0, 0)...)
		require.Equal(t, []int{1000, 1000}, rec.sizes, "nothing sent after the failure")
		require.Len(t, res, 3500)
		require.NoError(t, res[999].Error())
		for _, r := range res[1000:] {
			require.ErrorIs(t, r.Error(), errBrokenPipe)
		}
		n, err := c.Do(ctx, c.B().Get().Key("k").Build()).AsInt64()
		require.NoError(t, err)
		require.Equal(t, int64(1000), n)
	})
}

func TestChunkEnd(t *testing.T) {
	b := chunkClient(t).B()
	cmds := incrs(b, "k", 10, 3, 4) // 3 INCRs, MULTI, 4 INCRs, EXEC, 7 INCRs
	for limit, want := range map[int]int{1: 1, 3: 3, 4: 3, 8: 3, 9: 9, 10: 10, 100: len(cmds)} {
		require.Equal(t, want, chunkEnd(cmds, limit), "limit %d", limit)
	}
	require.Equal(t, 5, chunkEnd(incrs(b, "k", 5, 0, 4)[:5], 2), "a MULTI without its EXEC: to the end")
}
