package testredis

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// CountingClient counts the calls that reach Redis, so tests can prove that
// an operation costs one round trip. Every method that talks to Redis counts;
// a call rueidis answers without sending anything does not (a DoMulti,
// DoMultiCache or DoMultiStream of no commands, a cache hit), so that a pin
// never counts a round trip Redis did not see. Do and DoMulti also count
// the commands they send.
type CountingClient struct {
	rueidis.Client
	calls, hits, cmds, multis, cached atomic.Int64
}

// Calls returns how many calls reached Redis so far.
func (c *CountingClient) Calls() int64 { return c.calls.Load() }

// Commands returns how many commands Do and DoMulti sent so far, each
// command of a pipeline apart.
func (c *CountingClient) Commands() int64 { return c.cmds.Load() }

// Multis returns how many calls of Do and DoMulti sent a MULTI so far:
// the calls Redis refuses whole while over its maxmemory.
func (c *CountingClient) Multis() int64 { return c.multis.Load() }

// Do counts one round trip.
func (c *CountingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.calls.Add(1)
	c.cmds.Add(1)
	return c.Client.Do(ctx, cmd)
}

// DoMulti counts one round trip for the whole pipeline, none for an empty
// one (rueidis sends nothing).
func (c *CountingClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if len(multi) == 0 {
		return c.Client.DoMulti(ctx)
	}
	c.calls.Add(1)
	c.cmds.Add(int64(len(multi)))
	for i := range multi {
		if cmd := multi[i].Commands(); len(cmd) > 0 && cmd[0] == "MULTI" {
			c.multis.Add(1)
			break
		}
	}
	return c.Client.DoMulti(ctx, multi...)
}

// DoCache counts one round trip, unless the client's cache answered.
func (c *CountingClient) DoCache(ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	c.cached.Add(1)
	res := c.Client.DoCache(ctx, cmd, ttl)
	if res.IsCacheHit() {
		c.hits.Add(1)
	} else {
		c.calls.Add(1)
	}
	return res
}

// CacheCalls returns how many DoCache and DoMultiCache calls were made,
// answered by the cache or not: on a client built with DisableCache, each
// is one that rueidis may send as a cached read to a connection without a
// cache.
func (c *CountingClient) CacheCalls() int64 { return c.cached.Load() }

// CacheHits returns how many DoCache calls, and DoMultiCache calls whole,
// the client's cache answered.
func (c *CountingClient) CacheHits() int64 { return c.hits.Load() }

// DoMultiCache counts one round trip, or one cache hit when the client's
// cache answered every command; an empty one counts nothing (rueidis
// sends nothing).
func (c *CountingClient) DoMultiCache(ctx context.Context, multi ...rueidis.CacheableTTL) []rueidis.RedisResult {
	if len(multi) == 0 {
		return c.Client.DoMultiCache(ctx)
	}
	c.cached.Add(1)
	res := c.Client.DoMultiCache(ctx, multi...)
	for i := range res {
		if !res[i].IsCacheHit() {
			c.calls.Add(1)
			return res
		}
	}
	c.hits.Add(1)
	return res
}

// DoStream counts one round trip.
func (c *CountingClient) DoStream(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResultStream {
	c.calls.Add(1)
	return c.Client.DoStream(ctx, cmd)
}

// DoMultiStream counts one round trip, none for an empty one (rueidis
// sends nothing).
func (c *CountingClient) DoMultiStream(ctx context.Context, multi ...rueidis.Completed) rueidis.MultiRedisResultStream {
	if len(multi) == 0 {
		return c.Client.DoMultiStream(ctx)
	}
	c.calls.Add(1)
	return c.Client.DoMultiStream(ctx, multi...)
}

// Dedicated counts one call; a library using it would be suspect anyway.
func (c *CountingClient) Dedicated(fn func(rueidis.DedicatedClient) error) error {
	c.calls.Add(1)
	return c.Client.Dedicated(fn)
}

// Dedicate counts one call.
func (c *CountingClient) Dedicate() (rueidis.DedicatedClient, func()) {
	c.calls.Add(1)
	return c.Client.Dedicate()
}

// Receive counts one call.
func (c *CountingClient) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(msg rueidis.PubSubMessage)) error {
	c.calls.Add(1)
	return c.Client.Receive(ctx, subscribe, fn)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func rueidisFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
