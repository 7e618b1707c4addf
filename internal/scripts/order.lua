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
