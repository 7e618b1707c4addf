-- Ranks on one sorted set in the board's order (HIGH, COMP, SLOTS: the
-- header in common.lua).

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

-- The 0-based position of member in key in the board's order, or nil.
local function pos(key, member)
  local p
  if HIGH then p = redis.call('ZREVRANK', key, member) else p = redis.call('ZRANK', key, member) end
  if not p then return nil end
  return p
end

-- The rank of member, whose stored value in key is v: 1 + the members
-- strictly better under competition ranks, else its position + 1.
local function rank_of(key, member, v)
  if COMP then return better(key, v, HIGH) + 1 end
  return pos(key, member) + 1
end

-- Members strictly worse than v under competition ranks; -1 otherwise.
local function worse_comp(key, v)
  if COMP then return worse(key, v) end
  return -1
end
