-- Reads one shard of a sharded board on a Cluster where plain commands
-- cannot: the members strictly better than a score (competition ranks),
-- which needs the score first (Rank, and the first shard of a range), and
-- the stretches of a shard an Around with IncludeData cuts its slice from
-- in one round trip (they depend on where the member is). A member found
-- in two shards while it moves is resolved by the caller, from the
-- member's partition.
--
-- KEYS[1]  the shard's sorted set
-- ARGV     the header's board part (common.lua), then
--          'rank', member; or
--          'range', first position (0-based), count; or
--          'around', member, count; or
--          'between', lo, hi (stored bounds, inclusive), n; or
--          'score', b (a score's stored bound toward the better end),
--          radius; or
--          'after', stored value, member, n ('' '' for the first n)
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
-- first entry (competition ranks only, else 0), n, then n member, value
-- pairs}.
-- 'between' returns {members strictly better than lo..hi, then the stretch
-- of the best n within them} (Between on a sharded board).
-- 'score' returns {members, members strictly better than the score, then
-- the stretch of radius entries either side of that place} (AroundScore).
-- 'after' returns {members, then the stretch of the n entries after the
-- entry given} (All; see after in order.lua).
local key = KEYS[1]
local mode, a, b, c = ARGV[REST], ARGV[REST + 1], ARGV[REST + 2], ARGV[REST + 3]
local card = redis.call('ZCARD', key)

-- The 'rank' reply of member, and its position (nil when absent).
local function standing(member)
  local v = redis.call('ZSCORE', key, member)
  if not v then return {card, false, -1, 0, 0}, nil end
  -- ZREVRANK or ZRANK inline, not ranks.lua's pos: see range.lua.
  local p
  if HIGH then p = redis.call('ZREVRANK', key, member) else p = redis.call('ZRANK', key, member) end
  return {card, v, p, better(key, v, HIGH), worse(key, v)}, p
end

-- Appends the stretch [lo, hi] of the shard to out.
local function stretch(out, lo, hi)
  local items, at, bt = {}, 1, 0
  if lo <= hi then items, at, bt = range_better(key, lo, hi, COMP) end
  local n = #out
  out[n + 1], out[n + 2], out[n + 3] = lo, bt, (#items - at + 1) / 2
  for i = at, #items do out[#out + 1] = items[i] end
end

if mode == 'rank' then
  return (standing(a))
end

if mode == 'around' then
  local count = num(b)
  local out, p = standing(a)
  if p then
    stretch(out, math.max(0, p - count + 1), math.min(card - 1, p + count - 1))
  else
    stretch(out, 0, math.min(card, count) - 1)
    stretch(out, math.max(0, card - count), card - 1)
  end
  return out
end

if mode == 'between' then
  local edge = a
  if HIGH then edge = b end
  local p = better_than(key, edge)
  local out = {p}
  stretch(out, p, p + math.min(num(c), redis.call('ZCOUNT', key, a, b)) - 1)
  return out
end

if mode == 'score' then
  local p, radius = better_than(key, a), num(b)
  local out = {card, p}
  stretch(out, math.max(0, p - radius), math.min(card - 1, p + radius - 1))
  return out
end

if mode == 'after' then
  local start = 0
  if a ~= '' then start = after(key, a, b) end
  local out = {card}
  stretch(out, start, math.min(card - 1, start + num(c) - 1))
  return out
end

local start, count = num(a), num(b)
local out = {card, 0}
if count <= 0 or start >= card then return out end
local items, at, bt = range_better(key, start, start + count - 1, true)
out[2] = bt
for i = at, #items do out[#out + 1] = items[i] end
return out
