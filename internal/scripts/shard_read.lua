-- Reads one shard of a sharded board where a read that spans shards needs
-- the members strictly better than a score (competition ranks), which
-- plain commands cannot count without it: Rank on a Cluster, and the
-- first shard of a range. A member found in two shards while it moves is
-- resolved by the caller, from the member's partition.
--
-- KEYS[1]  the shard's sorted set
-- ARGV     the header's board part (common.lua), then
--          'rank', member; or
--          'range', first position (0-based), count; or
--          'around', member, count
--
-- 'rank' returns {members, stored value or nil, position (0-based, -1 when
-- absent), strictly better, strictly worse}.
-- 'range' returns {members, strictly better than the first entry, member,
-- value, member, value, ...}.
-- 'around' returns what 'rank' returns, then every stretch of the shard an
-- Around of count entries on a Cluster may need, whichever shard holds
-- the member (see around.go): with the member here, one stretch, the
-- positions within count - 1 of it; else two, its best count entries and
-- its worst count. A stretch is {first position, strictly better than its
-- first entry, n, then n member, value pairs}.
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

-- Appends the stretch [lo, hi] of the shard to out.
local function stretch(out, lo, hi)
  local items = {}
  if lo <= hi then
    if HIGH then
      items = redis.call('ZRANGE', key, lo, hi, 'REV', 'WITHSCORES')
    else
      items = redis.call('ZRANGE', key, lo, hi, 'WITHSCORES')
    end
  end
  local b = 0
  if #items > 0 then b = better(key, items[2], HIGH) end
  local n = #out
  out[n + 1], out[n + 2], out[n + 3] = lo, b, #items / 2
  for i = 1, #items do out[n + 3 + i] = items[i] end
end

if mode == 'around' then
  local count = num(b)
  local v = redis.call('ZSCORE', key, a)
  local out
  if v then
    local p
    if HIGH then p = redis.call('ZREVRANK', key, a) else p = redis.call('ZRANK', key, a) end
    out = {card, v, p, better(key, v, HIGH), worse(key, v)}
    stretch(out, math.max(0, p - count + 1), math.min(card - 1, p + count - 1))
  else
    out = {card, false, -1, 0, 0}
    stretch(out, 0, math.min(card, count) - 1)
    stretch(out, math.max(0, card - count), card - 1)
  end
  return out
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
