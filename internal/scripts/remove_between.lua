-- One chunk of RemoveBetween on an unsharded board: removes the best n
-- members whose stored values lie within lo..hi, so that a large removal
-- runs as many short scripts, none of which stalls the server; or, given
-- members (a chunk a store has recorded the removal of), those of them
-- whose stored values lie within lo..hi (RemoveBetween passes -inf..+inf
-- there: the store counts none of them any more, so Redis keeps none).
--
-- KEYS[1]  the period's sorted set
-- ARGV     the header's board part (common.lua), then lo, hi (stored
--          bounds, inclusive), n, then the members, if any
--
-- Returns {members removed, members left within lo..hi (0 with members)}.
local key = KEYS[1]
local lo, hi, n = ARGV[REST], ARGV[REST + 1], num(ARGV[REST + 2])
if #ARGV > REST + 2 then
  local ms = {}
  for i = REST + 3, #ARGV do
    local v = redis.call('ZSCORE', key, ARGV[i])
    if v and within(v, lo, hi) then ms[#ms + 1] = ARGV[i] end
  end
  if #ms > 0 then redis.call('ZREM', key, unpack(ms)) end
  return {#ms, 0}
end
local ms
if HIGH then
  ms = redis.call('ZRANGE', key, hi, lo, 'BYSCORE', 'REV', 'LIMIT', 0, n)
else
  ms = redis.call('ZRANGE', key, lo, hi, 'BYSCORE', 'LIMIT', 0, n)
end
if #ms == 0 then return {0, 0} end
redis.call('ZREM', key, unpack(ms))
return {#ms, redis.call('ZCOUNT', key, lo, hi)}
