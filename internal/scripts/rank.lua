-- A member's competition standing in one read: rank = 1 + members strictly
-- better, which needs the member's score before the count.
--
-- KEYS[1]  the sorted set
-- ARGV[1]  member
-- ARGV[2]  '1' when higher scores rank first
-- ARGV[3]  tie-break time slots, '0' for none
--
-- Returns {stored value, strictly better, strictly worse, members}, or nil
-- when the member is not ranked.
local key, high, slots = KEYS[1], ARGV[2] == '1', num(ARGV[3])
local v = redis.call('ZSCORE', key, ARGV[1])
if not v then return false end
return {v, better(key, v, high, slots), worse(key, v, high, slots), redis.call('ZCARD', key)}
