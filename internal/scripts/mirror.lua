
-- A hot top's mirror (WithHotTop), which hot_top.lua and hot_put.lua
-- write: one string, the k of the board that wrote it and ';', then the
-- period's first k entries in board order, each the member's length, ':',
-- the member, its stored value (fmt) and ','. A reader of another k reads
-- the period instead: this mirror is kept for k entries, not more.
-- A string, read with GET: the cheapest read a client caches (rueidis
-- keys a cached two-word command without building a key). The mirror of
-- an empty period holds only its k: it exists, so that a read tells "no
-- members" from "no mirror" and does not rebuild it on every call.

-- mirror_put makes mirror hold top (member, value, member, value, ...) as
-- the first k entries, expiring ttl ms later. A mirror that already holds
-- exactly that is left as it is, expiry and all: a write would invalidate
-- every client's cached copy of it. Values are written as fmt writes their numbers: a
-- client's formatting of one (hot_put.lua) differs from Redis's.
local function mirror_put(mirror, top, ttl, k)
  local parts = {k .. ';'}
  for i = 1, #top, 2 do
    parts[#parts + 1] = #top[i] .. ':' .. top[i] .. fmt(num(top[i + 1])) .. ','
  end
  local text = table.concat(parts)
  if redis.call('GET', mirror) == text then return 0 end
  redis.call('SET', mirror, text, 'PX', ttl)
  return 1
end
