-- Top with IncludeData on an unsharded board: the first n entries and
-- their members' data, and nothing else (no count, no ranks: Top's ranks
-- follow from the entries), so that the hot read pays for no more Lua
-- than it needs (every function a script defines is built on every call).
--
-- KEYS[1]  the period's sorted set; KEYS[2] the members' data hash
-- ARGV     the header's board part (common.lua), then n
--
-- Returns member, score, data (nil for none), ...; scores as strings.
local stop = num(ARGV[REST]) - 1
local items
if HIGH then
  items = redis.call('ZRANGE', KEYS[1], 0, stop, 'REV', 'WITHSCORES')
else
  items = redis.call('ZRANGE', KEYS[1], 0, stop, 'WITHSCORES')
end
if #items == 0 then return items end
local members = {}
for i = 1, #items, 2 do members[#members + 1] = items[i] end
local data = redis.call('HMGET', KEYS[2], unpack(members))
local out = {}
for k = 1, #members do
  local n = #out
  out[n + 1], out[n + 2], out[n + 3] = items[2 * k - 1], items[2 * k], data[k]
end
return out
