-- Reads one shard of a sharded board where a read that spans shards needs
-- the members strictly better than a score (competition ranks), which
-- plain commands cannot count without it: Rank on a Cluster, and the
-- first shard of a range. A member found in two shards while it moves is
-- resolved by the caller, from the member's partition.
--
-- KEYS[1]  the shard's sorted set
-- ARGV     the header's board part (common.lua), then
--          'rank', member; or
--          'range', first position (0-based), count
--
-- 'rank' returns {members, stored value or nil, position (0-based, -1 when
-- absent), strictly better, strictly worse}.
-- 'range' returns {members, strictly better than the first entry, member,
-- value, member, value, ...}.
local key = KEYS[1]
local mode, a, b = ARGV[REST], ARGV[REST + 1], ARGV[REST + 2]
local card = redis.call('ZCARD', key)

if mode == 'rank' then
  local v = redis.call('ZSCORE', key, a)
  if not v then return {card, false, -1, 0, 0} end
  -- ZREVRANK or ZRANK inline, not ranks.lua's pos: see range.lua.
  local p
  if HIGH then p = redis.call('ZREVRANK', key, a) else p = redis.call('ZRANK', key, a) end
  return {card, v, p, better(key, v, HIGH), worse(key, v)}
end

local start, count = num(a), num(b)
local out = {card, 0}
if count <= 0 or start >= card then return out end
local items
if HIGH then
  items = redis.call('ZRANGE', key, start, start + count - 1, 'REV', 'WITHSCORES')
else
  items = redis.call('ZRANGE', key, start, start + count - 1, 'WITHSCORES')
end
out[2] = better(key, items[2], HIGH)
for i = 1, #items do out[#out + 1] = items[i] end
return out
