-- A member's competition standing in one read: rank = 1 + members strictly
-- better, which needs the member's score before the count.
--
-- KEYS[1]  the sorted set
-- ARGV     the header's board part (common.lua), then the member
--
-- Returns {stored value, strictly better, strictly worse, members}, or nil
-- when the member is not ranked.
local key = KEYS[1]
local v = redis.call('ZSCORE', key, ARGV[REST])
if not v then return false end
return {v, better(key, v, HIGH), worse(key, v), redis.call('ZCARD', key)}
