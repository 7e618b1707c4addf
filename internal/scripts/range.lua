-- A slice of a board in one read where the slice depends on what is stored:
-- around a member (its rank decides the slice), or a page under competition
-- ranks (the first entry's rank counts the members strictly better).
--
-- KEYS[1]  the sorted set; KEYS[2], when given, the members' data hash
--          (IncludeData)
-- ARGV     the header's board part (common.lua), then
--          'around', member, radius; or
--          'page', first position (0-based), count; or
--          'cutoff', percent: the entry at position ceil(members * percent
--          / 100), at least 1 (Cutoff); or
--          'between', lo, hi (stored bounds, inclusive), n: the best n
--          entries within them (Between); or
--          'score', b, radius: the radius entries either side of the place
--          of a score whose stored bound toward the better end is b
--          (AroundScore); or
--          'after', stored value, member, n: the n entries after that entry
--          ('' for the first n) in board order (All; see after in order.lua)
--
-- Returns {members in the set (for 'score': the members strictly better
-- than the score), first position, rank of the first entry,
-- member, score, member, score, ...}, with a data hash member, score, data
-- (nil for none), ...; or nil when the member is not ranked. Scores are
-- strings (see submit.lua).
local key = KEYS[1]
local mode, a, b, c = ARGV[REST], ARGV[REST + 1], ARGV[REST + 2], ARGV[REST + 3]
local total = redis.call('ZCARD', key)
local card, start, count = total

if mode == 'around' then
  -- ZREVRANK or ZRANK inline, not ranks.lua's pos: every function a
  -- script defines is built again on every call, which a hot read pays.
  local p
  if HIGH then p = redis.call('ZREVRANK', key, a) else p = redis.call('ZRANK', key, a) end
  if not p then return false end
  local radius = num(b)
  count = 2 * radius + 1
  start = math.max(0, math.min(p - radius, total - count))
elseif mode == 'cutoff' then
  start, count = cutoff_position(total, a) - 1, 1
elseif mode == 'between' then
  local edge = a
  if HIGH then edge = b end
  start = better_than(key, edge)
  count = math.min(num(c), redis.call('ZCOUNT', key, a, b))
elseif mode == 'score' then
  local p, radius = better_than(key, a), num(b)
  start = math.max(0, p - radius)
  count = p + radius - start
  total = p
elseif mode == 'after' then
  start, count = 0, num(c)
  if a ~= '' then start = after(key, a, b) end
else
  start, count = num(a), num(b)
end

local out = {total, start, 0}
if count <= 0 or start >= card then return out end

local items, at, bt = range_better(key, start, start + count - 1, COMP)
if #items < at then return out end

out[3] = start + 1
if COMP then out[3] = bt + 1 end
if not KEYS[2] then
  for i = at, #items do out[#out + 1] = items[i] end
  return out
end
local members = {}
for i = at, #items, 2 do members[#members + 1] = items[i] end
local data = redis.call('HMGET', KEYS[2], unpack(members))
for k = 1, #members do
  local n, i = #out, at + 2 * k - 2
  out[n + 1], out[n + 2], out[n + 3] = items[i], items[i + 1], data[k]
end
return out
