-- A member's competition standing in one read: rank = 1 + members strictly
-- better, which needs the member's score before the count.
--
-- KEYS[1]  the sorted set
-- ARGV[1]  member
-- ARGV[2]  '1' when higher scores rank first
--
-- Returns {score, strictly better, strictly worse, members}, or nil when the
-- member is not ranked.
local key, member = KEYS[1], ARGV[1]
local s = redis.call('ZSCORE', key, member)
if not s then return false end
local below = redis.call('ZCOUNT', key, '-inf', '(' .. s)
local above = redis.call('ZCOUNT', key, '(' .. s, '+inf')
-- No "a, b = b, a" swap: gopher-lua (miniredis) gets it wrong.
if ARGV[2] == '1' then
  return {s, above, below, redis.call('ZCARD', key)}
end
return {s, below, above, redis.call('ZCARD', key)}
