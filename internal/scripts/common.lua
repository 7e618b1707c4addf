-- Shared by every script: scripts.go puts this prelude in front of each one.
-- Only locals: Redis refuses scripts that create globals.

-- The largest finite double: a sum beyond it is infinite. Not math.huge,
-- which some Lua engines (gopher-lua, in miniredis) define as this number.
local MAXF = 1.7976931348623157e308

-- A number as an exact decimal string for a Redis argument. Lua's own
-- tostring keeps only 14 digits.
local function fmt(x)
  return string.format('%.17g', x)
end

-- Arithmetic rather than tonumber(): both accept every form Redis prints a
-- score in, where gopher-lua's tonumber() refuses "1e+22".
local function num(s)
  return s + 0
end

-- A tie-break composite c = s * slots + tie, 0 <= tie < slots, split back
-- into its parts; exact, as every value involved is an integer below 2^53.
local function split(c, slots)
  local s = math.floor(c / slots)
  local tie = c - s * slots
  if tie < 0 then
    s, tie = s - 1, tie + slots
  elseif tie >= slots then
    s, tie = s + 1, tie - slots
  end
  return s, tie
end

-- Every script's ARGV opens with one header, in this order; the Go side
-- builds it with scripts.Header and nowhere else:
--   ARGV[1]   '1' when higher scores rank first
--   ARGV[2]   '1' for competition ranks (1 + members strictly better)
--   ARGV[3]   tie-break time slots, '0' for none
--   ARGV[4]   the write's policy: 'GT' | 'LT' (KeepBest), 'SET' (Replace),
--             'INCR' (Accumulate); '' for a read
--   ARGV[5]   the write's time slot, ARGV[6] '1' when the tie part is
--             reversed, ARGV[7] the largest |scaled score| (see apply)
--   ARGV[8]   WithID id, '' for none; ARGV[9] now in unix ms; ARGV[10]
--             when the id is forgotten, in unix ms, or 'store' (see
--             seen_before)
-- A script's own arguments start at ARGV[H.rest].
local H = {
  high = ARGV[1] == '1', comp = ARGV[2] == '1', slots = num(ARGV[3]),
  policy = ARGV[4], t = num(ARGV[5]), rev = ARGV[6] == '1', maxs = num(ARGV[7]),
  id = ARGV[8], now = ARGV[9], forget = ARGV[10],
  rest = 11,
}

-- Members whose plain score is strictly better than that of the stored
-- value v (a score string, or a composite under a tie-break), on a board
-- whose higher scores rank first when high. Competition ranks are 1 + this
-- with high = H.high.
local function better(key, v, high)
  local slots = H.slots
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
  return better(key, v, not H.high)
end

-- The 0-based position of member in key in the board's order, or nil.
local function pos(key, member)
  local p
  if H.high then p = redis.call('ZREVRANK', key, member) else p = redis.call('ZRANK', key, member) end
  if not p then return nil end
  return p
end

-- The rank of member, whose stored value in key is v: 1 + the members
-- strictly better under competition ranks, else its position + 1.
local function rank_of(key, member, v)
  if H.comp then return better(key, v, H.high) + 1 end
  return pos(key, member) + 1
end

-- Members strictly worse than v under competition ranks; -1 otherwise.
local function worse_comp(key, v)
  if H.comp then return worse(key, v) end
  return -1
end

-- The version a hash of versions holds for member, 0 for none.
local function version_of(ver, member)
  return tonumber(redis.call('HGET', ver, member) or '0')
end

-- Appends one window's block of a write's reply: the previous stored value
-- (or false), previous rank (0: none), stored value (or false), rank,
-- members, members strictly worse (-1 when not competition).
local function window_reply(out, p, prank, v, rank, total, w)
  local n = #out
  out[n + 1] = p or false
  out[n + 2] = prank
  out[n + 3] = v or false
  out[n + 4] = rank
  out[n + 5] = total
  out[n + 6] = w
end

-- What to store when a submission of value meets the stored value p (a
-- string, or nil for a new member), under the header's policy: the new
-- stored string, nil to leave it, or false and an error code when the
-- result would leave the range. With a tie-break, value is the scaled
-- integer score, composed here with the header's time slot.
local function apply(p, value)
  local policy, high, slots = H.policy, H.high, H.slots
  if slots > 0 then
    local s = num(value)
    local function encode(sc)
      local tie = H.t
      if H.rev then tie = slots - 1 - H.t end
      return fmt(sc * slots + tie)
    end
    if not p or policy == 'SET' then return encode(s) end
    local olds, oldtie = split(num(p), slots)
    if policy == 'INCR' then
      local total = olds + s
      if total > H.maxs or total < -H.maxs then return false, 'LBRANGE' end
      return encode(total)
    end
    -- KeepBest keeps the first time a best was reached: a better score, or
    -- the same score stamped earlier (a replay), replaces it.
    local oldt = oldtie
    if H.rev then oldt = slots - 1 - oldtie end
    if (high and s > olds) or (not high and s < olds) or (s == olds and H.t < oldt) then
      return encode(s)
    end
    return nil
  end
  if not p or policy == 'SET' then return value end
  if policy == 'INCR' then
    local total = num(p) + num(value)
    if total > MAXF or total < -MAXF then return false, 'LBOVERFLOW' end
    return fmt(total)
  end
  local v, o = num(value), num(p)
  if (policy == 'GT' and v > o) or (policy == 'LT' and v < o) then return value end
  return nil
end

-- Whether the header's WithID id counts as applied: its forget is 'store'
-- when the store reports the id from before the dedupe window (Submit
-- asked it), which wins over what Redis remembers. Otherwise drops the ids
-- whose time is up and looks the id up in the board's id set ids. It
-- records nothing: the id memory is written state, so remember records an
-- id only once its submission has passed every check (a refused submission
-- leaves its id free for the corrected retry).
local function seen_before(ids)
  if H.forget == 'store' then return true end
  redis.call('ZREMRANGEBYSCORE', ids, '-inf', H.now)
  if redis.call('ZSCORE', ids, H.id) then return true end
  return false
end

-- Records the header's id in the id set ids until it is forgotten; the set
-- lives as long as its newest id.
local function remember(ids)
  redis.call('ZADD', ids, H.forget, H.id)
  redis.call('PEXPIREAT', ids, H.forget)
end
