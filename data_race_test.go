package leaderboard_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// dataModel is one member's truth: its score in today's and yesterday's
// daily periods and all time (Replace), and its data.
type dataModel struct {
	today, yday, all *float64
	data             string
}

// TestDataConcurrentModel: goroutines each own a set of members and run
// Submit (with and without data, today or yesterday), SetData and Remove
// on them at once, members of different goroutines sharing partitions and
// shards; once they stop, every read with IncludeData gives each member
// its own score and data, as a plain Go model of each goroutine's
// sequence says.
func TestDataConcurrentModel(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(0, 40)}} {
			t.Run(kind, func(t *testing.T) { runDataConcurrent(t, b, opts) })
		}
	})
}

func runDataConcurrent(t *testing.T, b *testredis.Backend, opts []lb.Option) {
	ctx := context.Background()
	yday := future.Add(-24 * time.Hour)
	board, err := lb.New(b.Client, shardName(t, b), append(opts, lb.WithPolicy(lb.Replace),
		lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithRetention(48*time.Hour), lb.WithClock(fixed(future)))...)
	require.NoError(t, err)
	const workers, per, steps = 6, 5, 40
	models := make([]map[string]*dataModel, workers)
	var wg sync.WaitGroup
	for g := range workers {
		models[g] = map[string]*dataModel{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			m := models[g]
			for i := range per {
				m[fmt.Sprintf("w%d-m%d", g, i)] = &dataModel{}
			}
			for s := range steps {
				name := fmt.Sprintf("w%d-m%d", g, rng.IntN(per))
				md := m[name]
				score := float64(rng.IntN(100) - 20)
				switch x := rng.IntN(10); {
				case x < 4:
					var o []lb.SubmitOption
					if rng.IntN(2) == 0 {
						d := fmt.Sprintf("%s@%d", name, s)
						o = append(o, lb.WithData(d))
						md.data = d
					}
					_, err := board.Submit(ctx, name, score, o...)
					if err != nil {
						t.Errorf("submit: %v", err)
						return
					}
					md.today, md.all = &score, &score
				case x < 6:
					d := fmt.Sprintf("%s@%d", name, s)
					_, err := board.Submit(ctx, name, score, lb.WithTime(yday), lb.WithData(d))
					if err != nil {
						t.Errorf("submit yday: %v", err)
						return
					}
					md.yday, md.all, md.data = &score, &score, d
				case x < 8:
					d := ""
					if rng.IntN(3) > 0 {
						d = fmt.Sprintf("%s#%d", name, s)
					}
					if err := board.SetData(ctx, name, d); err != nil {
						t.Errorf("set data: %v", err)
						return
					}
					md.data = d
				default:
					if err := board.Remove(ctx, name); err != nil {
						t.Errorf("remove: %v", err)
						return
					}
					*md = dataModel{}
				}
			}
		}()
	}
	wg.Wait()
	require.False(t, t.Failed())
	all := map[string]*dataModel{}
	for _, m := range models {
		for k, v := range m {
			all[k] = v
		}
	}
	checkDataViews(t, board, all, yday)
}

// checkDataViews reads every period of board with IncludeData every way
// and requires each member's model score and data.
func checkDataViews(t *testing.T, board *lb.Leaderboard, all map[string]*dataModel, yday time.Time) {
	ctx := context.Background()
	names := make([]string, 0, len(all))
	for k := range all {
		names = append(names, k)
	}
	sort.Strings(names)
	views := []struct {
		q     []lb.Query
		score func(*dataModel) *float64
	}{
		{nil, func(m *dataModel) *float64 { return m.all }},
		{[]lb.Query{lb.In(lb.Daily())}, func(m *dataModel) *float64 { return m.today }},
		{[]lb.Query{lb.In(lb.Daily()), lb.At(yday)}, func(m *dataModel) *float64 { return m.yday }},
	}
	for vi, v := range views {
		q := append(v.q, lb.IncludeData())
		want := map[string]lb.Entry{}
		for k, m := range all {
			if s := v.score(m); s != nil {
				want[k] = lb.Entry{Member: k, Score: *s, Data: m.data}
			}
		}
		strip := func(es []lb.Entry) map[string]lb.Entry {
			out := map[string]lb.Entry{}
			for _, e := range es {
				e.Rank = 0
				out[e.Member] = e
			}
			return out
		}
		top, err := board.Top(ctx, 1000, q...)
		require.NoError(t, err)
		require.Equal(t, want, strip(top), "view %d Top", vi)
		page, err := board.Page(ctx, 1, 1000, q...)
		require.NoError(t, err)
		require.Equal(t, want, strip(page.Entries), "view %d Page", vi)
		rng, err := board.Range(ctx, 1, 1000, q...)
		require.NoError(t, err)
		require.Equal(t, want, strip(rng), "view %d Range", vi)
		btw, err := board.Between(ctx, math.Inf(-1), math.Inf(1), 1000, q...)
		require.NoError(t, err)
		require.Equal(t, want, strip(btw), "view %d Between", vi)
		among, err := board.Among(ctx, names, q...)
		require.NoError(t, err)
		require.Equal(t, want, strip(among), "view %d Among", vi)
		_, as, err := board.AroundScore(ctx, 1000, 100, q...)
		require.NoError(t, err)
		require.Equal(t, want, strip(as), "view %d AroundScore", vi)
		var walked []lb.Entry
		for e, err := range board.All(ctx, q...) {
			require.NoError(t, err)
			walked = append(walked, e)
		}
		require.Equal(t, want, strip(walked), "view %d All", vi)
		sts, err := board.Ranks(ctx, names, q...)
		require.NoError(t, err)
		for i, st := range sts {
			require.Equal(t, all[names[i]].data, st.Data, "view %d Ranks(%s)", vi, names[i])
			if e, ok := want[names[i]]; ok {
				require.Equal(t, e.Score, st.Score, "view %d Ranks(%s)", vi, names[i])
				r, err := board.Rank(ctx, names[i], q...)
				require.NoError(t, err)
				require.Equal(t, e.Data, r.Data)
				ar, err := board.Around(ctx, names[i], 2, q...)
				require.NoError(t, err)
				for _, a := range ar {
					require.Equal(t, want[a.Member].Data, a.Data, "view %d Around(%s)", vi, names[i])
				}
			} else {
				require.Zero(t, st.Rank, "view %d Ranks(%s)", vi, names[i])
			}
		}
		if c, err := board.Cutoff(ctx, 100, q...); err == nil {
			require.Equal(t, want[c.Member].Data, c.Data)
		}
	}
	if reps, err := board.Check(ctx, false); err == nil {
		for _, r := range reps {
			require.True(t, r.Clean(), "%+v", r)
		}
	}
}
