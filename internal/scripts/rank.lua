-- Standings in one read (Rank, Ranks): under competition ranks rank = 1 +
-- members strictly better, which needs each member's score before the
-- count; under ordinal ranks the member's position (a board that reads
-- from replicas takes this script in place of a MULTI).
--
-- KEYS[1]  the sorted set; KEYS[2], when given, the members' data hash
--          (IncludeData)
-- ARGV     the header's board part (common.lua), then the members
--
-- Returns {members in the set, then per member: its stored value (false
-- when it is not ranked), the members strictly better (ordinal: its
-- 0-based position), strictly worse (ordinal: 0)}, and with a data hash
-- then each member's data (nil for none).
local key = KEYS[1]
local out = {redis.call('ZCARD', key)}
for i = REST, #ARGV do
  local v = redis.call('ZSCORE', key, ARGV[i])
  if v and not COMP then
    local p
    if HIGH then p = redis.call('ZREVRANK', key, ARGV[i]) else p = redis.call('ZRANK', key, ARGV[i]) end
    out[#out + 1] = v
    out[#out + 1] = p
    out[#out + 1] = 0
  elseif v then
    out[#out + 1] = v
    out[#out + 1] = better(key, v, HIGH)
    out[#out + 1] = worse(key, v)
  else
    out[#out + 1] = false
    out[#out + 1] = 0
    out[#out + 1] = 0
  end
end
if KEYS[2] then
  for i = REST, #ARGV do out[#out + 1] = redis.call('HGET', KEYS[2], ARGV[i]) end
end
return out
