-- One chunk of RemoveBetween on an unsharded board: removes the best n
-- members whose stored values lie within lo..hi, so that a large removal
-- runs as many short scripts, none of which stalls the server.
--
-- KEYS[1]  the period's sorted set
-- ARGV     the header's board part (common.lua), then lo, hi (stored
--          bounds, inclusive), n
--
-- Returns {members removed, members left within lo..hi}.
local key = KEYS[1]
local lo, hi, n = ARGV[REST], ARGV[REST + 1], num(ARGV[REST + 2])
local ms
if HIGH then
  ms = redis.call('ZRANGE', key, hi, lo, 'BYSCORE', 'REV', 'LIMIT', 0, n)
else
  ms = redis.call('ZRANGE', key, lo, hi, 'BYSCORE', 'LIMIT', 0, n)
end
if #ms == 0 then return {0, 0} end
redis.call('ZREM', key, unpack(ms))
return {#ms, redis.call('ZCOUNT', key, lo, hi)}
