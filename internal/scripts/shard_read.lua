-- Reads one shard of a sharded board for a read that spans shards, with the
-- versions that let the caller drop a member's stale copy while it moves
-- between shards.
--
-- KEYS[1]  the shard's sorted set, KEYS[2] its version hash
-- ARGV[1]  '1' when higher scores rank first, ARGV[2] tie-break slots
-- ARGV[3]  'rank': ARGV[4] member
--          'range': ARGV[4] first position (0-based), ARGV[5] count
--
-- 'rank' returns {members, stored value or nil, version, position (0-based,
-- -1 when absent), strictly better, strictly worse}.
-- 'range' returns {members, strictly better than the first entry, member,
-- value, version, member, value, version, ...}.
local key, ver = KEYS[1], KEYS[2]
local high, slots = ARGV[1] == '1', num(ARGV[2])
local card = redis.call('ZCARD', key)

if ARGV[3] == 'rank' then
  local member = ARGV[4]
  local v = redis.call('ZSCORE', key, member)
  if not v then return {card, false, 0, -1, 0, 0} end
  local pos
  if high then pos = redis.call('ZREVRANK', key, member) else pos = redis.call('ZRANK', key, member) end
  return {card, v, tonumber(redis.call('HGET', ver, member) or '0'), pos,
    better(key, v, high, slots), worse(key, v, high, slots)}
end

local start, count = num(ARGV[4]), num(ARGV[5])
local out = {card, 0}
if count <= 0 or start >= card then return out end
local items
if high then
  items = redis.call('ZRANGE', key, start, start + count - 1, 'REV', 'WITHSCORES')
else
  items = redis.call('ZRANGE', key, start, start + count - 1, 'WITHSCORES')
end
out[2] = better(key, items[2], high, slots)
for i = 1, #items, 2 do
  out[#out + 1] = items[i]
  out[#out + 1] = items[i + 1]
  out[#out + 1] = tonumber(redis.call('HGET', ver, items[i]) or '0')
end
return out
