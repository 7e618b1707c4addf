
-- A hot top's mirror (WithHotTop), which hot_top.lua and hot_put.lua
-- write. A marked mirror (a sharded board's) ends with the member '' at
-- the worst end ('-inf' on a HighestFirst board, '+inf' else), which no
-- member can be (Submit refuses an empty member): the mirror of an empty
-- period then exists, so that a read tells "no members" from "no mirror"
-- and does not rebuild it on every call.
local MARK = HIGH and '-inf' or '+inf'

-- mirror_put makes mirror hold top (member, value, member, value, ...)
-- and, with mark, the mark, expiring ttl ms later. A mirror that already
-- holds exactly that is left as it is, expiry and all: a write would
-- invalidate every client's cached copy of it. Values are compared as
-- numbers: a client's formatting of one differs from Redis's.
local function mirror_put(mirror, top, mark, ttl)
  local old = board_range(mirror, 0, -1)
  local n, same = #old, true
  if mark then
    same = n >= 2 and old[n - 1] == ''
    n = n - 2
  end
  same = same and n == #top
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
  if mark then
    args[#args + 1], args[#args + 2] = MARK, ''
  end
  if #args > 0 then
    redis.call('ZADD', mirror, unpack(args))
    redis.call('PEXPIRE', mirror, ttl)
  end
  return 1
end
