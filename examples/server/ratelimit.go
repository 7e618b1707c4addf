package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// tokenBucket takes one token from the bucket at KEYS[1] if it has one.
// ARGV: rate (tokens per second), burst (bucket size). A bucket starts full.
// It returns {allowed (0 or 1), milliseconds until a token is available}.
//
// Time comes from Redis (TIME), not from the callers, so instances whose
// clocks disagree still share one bucket fairly. Redis 5+ replicates a
// script by its effects, which makes TIME safe here. The key expires once
// the bucket would be full again, when it is equivalent to no key.
var tokenBucket = rueidis.NewLuaScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ms')
local tokens = tonumber(state[1])
local last = tonumber(state[2])
if tokens == nil or last == nil then
  tokens = burst
  last = now
end
if now > last then
  tokens = math.min(burst, tokens + (now - last) * rate / 1000)
end
if tokens < 1 then
  return {0, math.ceil((1 - tokens) * 1000 / rate)}
end
tokens = tokens - 1
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ms', tostring(math.max(now, last)))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return {1, 0}
`)

// limiter is a per-user token bucket in Redis, shared by every instance of
// the service. github.com/go-redis/redis_rate does the same for go-redis
// clients only; this is its idea in one small script for rueidis.
type limiter struct {
	client rueidis.Client
	prefix string
	rate   string
	burst  string
}

func newLimiter(client rueidis.Client, prefix string, rate float64, burst int) *limiter {
	return &limiter{
		client: client,
		prefix: prefix,
		rate:   strconv.FormatFloat(rate, 'g', -1, 64),
		burst:  strconv.Itoa(burst),
	}
}

// allow takes a token for user; when there is none it returns false and how
// long until there will be one.
func (l *limiter) allow(ctx context.Context, user string) (bool, time.Duration, error) {
	r, err := tokenBucket.Exec(ctx, l.client, []string{l.prefix + "rate:" + user}, []string{l.rate, l.burst}).AsIntSlice()
	if err != nil {
		return false, 0, fmt.Errorf("rate limit: %w", err)
	}
	if len(r) != 2 {
		return false, 0, fmt.Errorf("rate limit: script returned %d values, want 2", len(r))
	}
	return r[0] == 1, time.Duration(r[1]) * time.Millisecond, nil
}
