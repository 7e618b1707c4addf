-- Rewrites a period's top mirror (WithHotTop) from the period: its first k
-- entries, when they differ from what the mirror holds. A script, not
-- ZRANGESTORE: ZRANGESTORE rewrites (and so invalidates every client's
-- cached copy of) the mirror even when its content stays the same, and
-- drops its expiry; and miniredis, which the tests and the quickstart run
-- on, lacks it. An unchanged mirror keeps its expiry: it still expires at
-- most the TTL after its content was last written.
--
-- KEYS[1]  the mirror; KEYS[2] the period's sorted set
-- ARGV     the header's board part (common.lua), then k, the TTL in ms
--
-- Returns the first k entries: member, value, member, value, ...
local mirror, key = KEYS[1], KEYS[2]
local top = board_range(key, 0, num(ARGV[REST]) - 1)
local old = board_range(mirror, 0, -1)
local same = #old == #top
for i = 1, #top do
  if not same then break end
  same = old[i] == top[i]
end
if same then return top end
redis.call('DEL', mirror)
if #top > 0 then
  local args = {}
  for i = 1, #top, 2 do
    args[#args + 1], args[#args + 2] = top[i + 1], top[i]
  end
  redis.call('ZADD', mirror, unpack(args))
  redis.call('PEXPIRE', mirror, ARGV[REST + 1])
end
return top
