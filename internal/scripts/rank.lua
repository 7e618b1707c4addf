-- A member's competition standing in one read: rank = 1 + members strictly
-- better, which needs the member's score before the count.
--
-- KEYS[1]  the sorted set
-- ARGV     the header (common.lua), then the member
--
-- Returns {stored value, strictly better, strictly worse, members}, or nil
-- when the member is not ranked.
local key = KEYS[1]
local v = redis.call('ZSCORE', key, ARGV[H.rest])
if not v then return false end
return {v, better(key, v, H.high), worse(key, v), redis.call('ZCARD', key)}
