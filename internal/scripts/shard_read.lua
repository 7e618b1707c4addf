-- Reads one shard of a sharded board for a read that spans shards, with the
-- versions that let the caller drop a member's stale copy while it moves
-- between shards on a Cluster.
--
-- KEYS[1]  the shard's sorted set; on a Cluster KEYS[2] and KEYS[3] its
--          recent versions (versions.lua)
-- ARGV     the header's board part (common.lua), then
--          'rank', member; or
--          'range', first position (0-based), count
--
-- 'rank' returns {members, stored value or nil, version, position (0-based,
-- -1 when absent), strictly better, strictly worse}.
-- 'range' returns {members, strictly better than the first entry, member,
-- value, version, member, value, version, ...}.
-- A version is 0 where the shard remembers none (no write in the last
-- minute, or one node).
local key = KEYS[1]
local r0, r1
if KEYS[2] and redis.call('EXISTS', KEYS[2], KEYS[3]) > 0 then r0, r1 = KEYS[2], KEYS[3] end
local mode, a, b = ARGV[REST], ARGV[REST + 1], ARGV[REST + 2]
local card = redis.call('ZCARD', key)

if mode == 'rank' then
  local v = redis.call('ZSCORE', key, a)
  if not v then return {card, false, 0, -1, 0, 0} end
  -- ZREVRANK or ZRANK inline, not ranks.lua's pos: see range.lua.
  local p
  if HIGH then p = redis.call('ZREVRANK', key, a) else p = redis.call('ZRANK', key, a) end
  return {card, v, recent_of(r0, r1, a), p, better(key, v, HIGH), worse(key, v)}
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
for i = 1, #items, 2 do
  out[#out + 1] = items[i]
  out[#out + 1] = items[i + 1]
  out[#out + 1] = recent_of(r0, r1, items[i])
end
return out
