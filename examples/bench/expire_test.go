package main

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteBaselinesSetExpiry: every raw write of a windowed board sets
// its period's expiry on each call, as the SDK's writes do (a period's
// first write must give its key one): a baseline's key deleted, then
// written by one call, expires.
func TestWriteBaselinesSetExpiry(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		for _, policy := range []string{"keepbest", "accumulate"} {
			t.Run(backend+" "+policy, func(t *testing.T) {
				b := tieBench(t, backend, "-windows", "alltime,daily", "-policy", policy)
				ctx := context.Background()
				w := &worker{r: rand.New(rand.NewPCG(1, 2))}
				for _, name := range []string{"submit", "submit-many", "set"} {
					for _, im := range b.operation(name).impls {
						if im.name == "sdk" || im.name == "go-redis articles" {
							continue
						}
						for _, rk := range b.raw {
							require.NoError(t, b.c.rue.Do(ctx, b.c.rue.B().Del().Key(rk.key).Build()).Error())
						}
						require.NoError(t, im.call(ctx, w), "%s %s", name, im.name)
						for _, rk := range b.raw {
							if rk.expire.IsZero() || name == "set" && rk != b.raw[0] {
								continue // set writes the first window alone
							}
							ms, err := b.c.rue.Do(ctx, b.c.rue.B().Pexpiretime().Key(rk.key).Build()).AsInt64()
							require.NoError(t, err)
							// miniredis keeps a TTL, not a time: a millisecond off.
							require.InDelta(t, rk.expire.UnixMilli(), ms, 5, "%s %s: %s's expiry", name, im.name, rk.window)
						}
					}
				}
			})
		}
	}
}
