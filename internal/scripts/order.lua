-- Counting members better or worse than a stored value, in the board's
-- order (HIGH, SLOTS: the header in common.lua).

-- Members whose plain score is strictly better than that of the stored
-- value v (a score string, or a composite under a tie-break), on a board
-- whose higher scores rank first when high. Competition ranks are 1 + this
-- with high = HIGH.
local function better(key, v, high)
  local slots = SLOTS
  if slots > 0 then
    local s = split(num(v), slots)
    if high then
      return redis.call('ZCOUNT', key, fmt((s + 1) * slots), '+inf')
    end
    return redis.call('ZCOUNT', key, '-inf', '(' .. fmt(s * slots))
  end
  if high then
    return redis.call('ZCOUNT', key, '(' .. v, '+inf')
  end
  return redis.call('ZCOUNT', key, '-inf', '(' .. v)
end

-- Members whose plain score is strictly worse: better, seen from the other end.
local function worse(key, v)
  return better(key, v, not HIGH)
end

-- Positions lo..hi (0-based, inclusive) of key in the board's order, as
-- member, score, member, score, ...
local function board_range(key, lo, hi)
  if HIGH then return redis.call('ZRANGE', key, lo, hi, 'REV', 'WITHSCORES') end
  return redis.call('ZRANGE', key, lo, hi, 'WITHSCORES')
end

-- The plain score of the stored value v: the score itself, or under a
-- tie-break its composite's score part. Plain scores tie where competition
-- ranks do.
local function plain(v)
  if SLOTS > 0 then return (split(num(v), SLOTS)) end
  return num(v)
end

-- The members strictly better than the entry at position lo (its
-- competition rank less one), from items read from lo - 1, the entry
-- before it first: when that entry's plain score is better (it cannot be
-- worse) every entry before lo is strictly better, so the count is lo;
-- only a tie takes better's ZCOUNT. The extra entry costs Redis less than
-- the count (BENCHMARKS.md, "a slice's first rank without a count").
local function better_after(key, items, lo)
  if plain(items[2]) ~= plain(items[4]) then return lo end
  return better(key, items[4], HIGH)
end

-- board_range of lo..hi that also settles, when want, the members
-- strictly better than the entry at lo (a slice's first competition rank
-- less one): it reads the entry before lo too (better_after). Returns the
-- items, the index in them of lo's member (1, or 3 after the entry
-- before), and the count (0 unless want).
local function range_better(key, lo, hi, want)
  if not want or lo <= 0 then return board_range(key, lo, hi), 1, 0 end
  local items = board_range(key, lo - 1, hi)
  if #items < 4 then return {}, 1, 0 end
  return items, 3, better_after(key, items, lo)
end

-- Members strictly better than the stored bound b in the board's order
-- (b a stored value, '+inf' or '-inf'): the members ranked before a score
-- range or a score (Between, AroundScore), and before a tie block (after).
local function better_than(key, b)
  if HIGH then return redis.call('ZCOUNT', key, '(' .. b, '+inf') end
  return redis.call('ZCOUNT', key, '-inf', '(' .. b)
end

-- Whether member a comes before member b among equal stored values in the
-- board's order: Redis orders them by their bytes, and a HighestFirst
-- board reads them reversed. Bytes, not Lua's <, which collates by locale.
local function comes_first(a, b)
  local less
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      less = x < y
      break
    end
  end
  if less == nil then less = #a < #b end
  if HIGH then return not less and a ~= b end
  return less
end

-- The position (0-based, board order) right after the entry (s, m) that a
-- walk last yielded (All): m's own place plus one while m still holds s;
-- else, m having moved or left, the place (s, m) would hold among the
-- members that hold s, found by bisecting their block by member bytes.
local function after(key, s, m)
  local v = redis.call('ZSCORE', key, m)
  if v and num(v) == num(s) then
    if HIGH then return redis.call('ZREVRANK', key, m) + 1 end
    return redis.call('ZRANK', key, m) + 1
  end
  local lo = better_than(key, s)
  local hi = lo + redis.call('ZCOUNT', key, s, s)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if comes_first(m, board_range(key, mid, mid)[1]) then hi = mid else lo = mid + 1 end
  end
  return lo
end

-- Cutoff's 1-based position among total members for the percent pct (a
-- string): ceil(total * pct / 100), at least 1, where a product within its
-- roundings' error of a whole number (under 2^-51 of it) is that number:
-- 64.4% of 250 is 161, not 161.00000000000003 (cutoffPosition in Go).
local function cutoff_position(total, pct)
  local x = total * num(pct) / 100
  local r = math.floor(x + 0.5)
  if math.abs(x - r) <= r * 2 ^ -51 then x = r end
  return math.max(1, math.ceil(x))
end
