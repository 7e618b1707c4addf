-- Ranks on one sorted set in the board's order (HIGH, COMP: the header in
-- common.lua); after order.lua.

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
