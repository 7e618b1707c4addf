
-- A hot top's mirror (WithHotTop), which hot_top.lua and hot_put.lua
-- write. A mirror ends with its mark, the member '' at the worst end
-- ('-inf' on a HighestFirst board, '+inf' else), which no member can be
-- (Submit refuses an empty member): the mirror of an empty period then
-- exists, so that a read tells "no members" from "no mirror" and does not
-- rebuild it on every call.
local MARK = HIGH and '-inf' or '+inf'

-- mirror_put makes mirror hold top (member, value, member, value, ...)
-- and the mark, expiring ttl ms later. A mirror that already
-- holds exactly that is left as it is, expiry and all: a write would
-- invalidate every client's cached copy of it. Values are compared as
-- numbers: a client's formatting of one differs from Redis's.
local function mirror_put(mirror, top, ttl)
  local old = board_range(mirror, 0, -1)
  local n = #old - 2
  local same = n == #top and old[n + 1] == ''
  for i = 1, #top, 2 do
    if not same then break end
    same = old[i] == top[i] and num(old[i + 1]) == num(top[i + 1])
  end
  if same then return 0 end
  redis.call('DEL', mirror)
  local args = {}
  for i = 1, #top, 2 do
    args[#args + 1], args[#args + 2] = top[i + 1], top[i]
  end
  args[#args + 1], args[#args + 2] = MARK, ''
  redis.call('ZADD', mirror, unpack(args))
  redis.call('PEXPIRE', mirror, ttl)
  return 1
end
