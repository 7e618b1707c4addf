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

-- Members whose plain score is strictly better than that of the stored
-- value v (a score string, or a composite when slots > 0). Competition ranks
-- are 1 + this.
local function better(key, v, high, slots)
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
local function worse(key, v, high, slots)
  return better(key, v, not high, slots)
end

-- What to store when a submission of value meets the stored value p (a
-- string, or nil for a new member): the new stored string, nil to leave it,
-- or false and an error code when the result would leave the range.
--   policy  'GT' | 'LT' (KeepBest), 'SET' (Replace), 'INCR' (Accumulate)
--   slots   tie-break time slots, 0 for none; with a tie-break, value is the
--           scaled integer score, t the time slot, rev whether the tie part
--           is slots-1-t, maxs the largest |score| the encoding holds
local function apply(p, value, policy, high, slots, t, rev, maxs)
  if slots > 0 then
    local s = num(value)
    local function encode(sc)
      local tie = t
      if rev then tie = slots - 1 - t end
      return fmt(sc * slots + tie)
    end
    if not p or policy == 'SET' then return encode(s) end
    local olds, oldtie = split(num(p), slots)
    if policy == 'INCR' then
      local total = olds + s
      if total > maxs or total < -maxs then return false, 'LBRANGE' end
      return encode(total)
    end
    -- KeepBest keeps the first time a best was reached: a better score, or
    -- the same score stamped earlier (a replay), replaces it.
    local oldt = oldtie
    if rev then oldt = slots - 1 - oldtie end
    if (high and s > olds) or (not high and s < olds) or (s == olds and t < oldt) then
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

-- Whether a WithID id counts as applied: forget is 'store' when the store
-- reports the id from before the dedupe window (Submit asked it), which wins
-- over what Redis remembers. Otherwise drops the ids whose time is up and
-- looks id up in the board's id set ids. It records nothing: the id memory
-- is written state, so remember records an id only once its submission has
-- passed every check (a refused submission leaves its id free for the
-- corrected retry).
local function seen_before(ids, id, now, forget)
  if forget == 'store' then return true end
  redis.call('ZREMRANGEBYSCORE', ids, '-inf', now)
  if redis.call('ZSCORE', ids, id) then return true end
  return false
end

-- Records id in the id set ids until forget (unix ms); the set lives as
-- long as its newest id.
local function remember(ids, id, forget)
  redis.call('ZADD', ids, forget, id)
  redis.call('PEXPIREAT', ids, forget)
end
