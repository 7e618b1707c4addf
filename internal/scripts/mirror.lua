
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
-- the first k entries, expiring ttl ms later, or sooner when the period's
-- data has less than that left (life ms; negative: no expiry): a mirror
-- must never show members of a period Redis has expired (a board's clock
-- behind the server's reads it as live). A mirror of no members shows
-- none, and keeps ttl (a read would else build it again every time). A
-- mirror that already holds exactly that is left as it is, expiry and all
-- (set no later than its period's end when it was written): a write would
-- invalidate every client's cached copy of it. Values are written as fmt
-- writes their numbers: a client's formatting of one (hot_put.lua) differs
-- from Redis's.
local function mirror_put(mirror, top, ttl, k, life)
  ttl = num(ttl)
  if #top > 0 and life >= 0 and life <= ttl then
    -- A millisecond short: Redis rounds the time a TTL counts from and
    -- the time PTTL or TIME tells differently, by up to one.
    if life < 2 then
      redis.call('UNLINK', mirror)
      return 0
    end
    ttl = life - 1
  end
  local parts = {k .. ';'}
  for i = 1, #top, 2 do
    parts[#parts + 1] = #top[i] .. ':' .. top[i] .. fmt(num(top[i + 1])) .. ','
  end
  local text = table.concat(parts)
  if redis.call('GET', mirror) == text then return 0 end
  redis.call('SET', mirror, text, 'PX', ttl)
  return 1
end
