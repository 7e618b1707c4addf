-- A slice of a board in one read where the slice depends on what is stored:
-- around a member (its rank decides the slice), or a page under competition
-- ranks (the first entry's rank counts the members strictly better).
--
-- KEYS[1]  the sorted set
-- ARGV[1]  '1' when higher scores rank first
-- ARGV[2]  '1' for competition ranks
-- ARGV[3]  'around': ARGV[4] member, ARGV[5] radius
--          'page':   ARGV[4] first position (0-based), ARGV[5] count
-- ARGV[6]  tie-break time slots, '0' for none
--
-- Returns {members in the set, first position, rank of the first entry,
-- member, score, member, score, ...}, or nil when the member is not ranked.
-- Scores are strings (see submit.lua).
local key = KEYS[1]
local high, comp, slots = ARGV[1] == '1', ARGV[2] == '1', num(ARGV[6])
local total = redis.call('ZCARD', key)
local start, count

if ARGV[3] == 'around' then
  local pos
  if high then pos = redis.call('ZREVRANK', key, ARGV[4]) else pos = redis.call('ZRANK', key, ARGV[4]) end
  if not pos then return false end
  local radius = num(ARGV[5])
  count = 2 * radius + 1
  start = math.max(0, math.min(pos - radius, total - count))
else
  start, count = num(ARGV[4]), num(ARGV[5])
end

local out = {total, start, 0}
if start >= total then return out end

local items
if high then
  items = redis.call('ZRANGE', key, start, start + count - 1, 'REV', 'WITHSCORES')
else
  items = redis.call('ZRANGE', key, start, start + count - 1, 'WITHSCORES')
end

local first = start + 1
if comp then first = better(key, items[2], high, slots) + 1 end
out[3] = first
for i = 1, #items do out[3 + i] = items[i] end
return out
