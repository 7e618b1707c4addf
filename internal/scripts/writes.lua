-- What the scripts that apply submissions share: the header's write part,
-- the policy, the WithID ids and the per-window reply.

local function write_header()
  POLICY, TSLOT, REV, MAXS = ARGV[4], num(ARGV[5]), ARGV[6] == '1', num(ARGV[7])
  ID, NOW, FORGET, DATA = ARGV[8], ARGV[9], ARGV[10], ARGV[11]
  REST = 12
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

-- Appends the block of a window whose period Redis deleted as the write set
-- its expiry (see expire_gone): no stored value, no rank, no members. The
-- Go side reads a write ranked by nobody after it as Closed.
local function closed_reply(out)
  window_reply(out, false, 0, false, 0, 0, -1)
end

-- What to store when a submission of value meets the stored value p (a
-- string, or nil for a new member), under the header's policy: the new
-- stored string, nil to leave it, or false and an error code when the
-- result would leave the range. With a tie-break, value is the scaled
-- integer score, composed here with the header's time slot.
local function apply(p, value)
  local policy, high, slots = POLICY, HIGH, SLOTS
  if slots > 0 then
    local s = num(value)
    local function encode(sc)
      local tie = TSLOT
      if REV then tie = slots - 1 - TSLOT end
      return fmt(sc * slots + tie)
    end
    if not p or policy == 'SET' then return encode(s) end
    local olds, oldtie = split(num(p), slots)
    if policy == 'INCR' then
      -- Adding 0 reaches no new total: the stamp of the one held stays
      -- (the store's aggregation keeps its time too).
      if s == 0 then return nil end
      local total = olds + s
      if total > MAXS or total < -MAXS then return false, 'LBRANGE' end
      return encode(total)
    end
    -- KeepBest keeps the first time a best was reached: a better score, or
    -- the same score stamped earlier (a replay), replaces it.
    local oldt = oldtie
    if REV then oldt = slots - 1 - oldtie end
    if (high and s > olds) or (not high and s < olds) or (s == olds and TSLOT < oldt) then
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

-- Whether the header's WithID id counts as applied, and how many keys
-- come before the id set, which is the last key when there is an id. Its
-- forget is 'store' when the store reports the id from before the dedupe
-- window (Submit asked it), which wins over what Redis remembers.
-- Otherwise looks the id up in the id set: an id whose time is up (at or
-- before NOW) counts as not seen. It writes nothing: the id memory is
-- written state, so remember records an id only once its submission has
-- passed every check (a refused submission leaves its id free for the
-- corrected retry), and sweeps the ids whose time is up then, after its
-- ZADD (see refuse_if_full).
local function seen_before()
  local nk = #KEYS
  if ID == '' then return false, nk end
  if FORGET == 'store' then return true, nk - 1 end
  local t = redis.call('ZSCORE', KEYS[nk], ID)
  if t and num(t) > num(NOW) then return true, nk - 1 end
  return false, nk - 1
end

-- Over maxmemory (noeviction) Redis refuses a script's first write when
-- it is one that may grow memory (ZADD, HSET, SET), and lets every later
-- write through: a write script puts those before any write that cannot
-- grow memory (an expiry, a ZREM), or, where its first write may be one
-- of those (a batch whose first submission changes nothing), opens with
-- refuse_if_full on one of its sorted sets: a ZADD that changes nothing
-- (XX: only members there; no member is '').
local function refuse_if_full(zset)
  redis.call('ZADD', zset, 'XX', 0, '')
end

-- The members' data hash: the key before the id set (see seen_before's
-- nk) when the header carries data, or when always (a removal, which
-- deletes data); else nil. Returns it and the number of keys before it.
local function data_key(nk, always)
  if DATA == '' and not always then return nil, nk end
  return KEYS[nk], nk - 1
end

-- Sets the header's data for member in the data hash d, when it carries
-- any.
local function set_data(d, member)
  if d and DATA ~= '' then redis.call('HSET', d, member, DATA) end
end

-- Sets the absolute expiry exp (unix ms; '0' for none) on a key a write
-- just wrote, and reports whether Redis deleted it then, its clock past
-- exp (a board's clock behind the server's): PEXPIREAT found the key, and
-- it is gone. The key's period is over, and its writes answer as closed
-- (closed_reply). Set and Rebuild's swap do the same in a transaction
-- (expiry.go).
local function expire_gone(key, exp)
  if exp == '0' then return false end
  return redis.call('PEXPIREAT', key, exp) == 1 and redis.call('EXISTS', key) == 0
end

-- Records the header's id in the id set (the last key) until it is
-- forgotten; the set lives as long as its newest id. Its life is set
-- relative to Redis's clock (the dedupe window, FORGET - NOW), not at
-- FORGET: the ids' times are the board's clock's, and a board clock
-- behind Redis's by more than the window (WithClock, a replay) would have
-- Redis delete the set at once, and every retry applied again. The ZADD
-- comes before the sweep of ids whose time is up (see refuse_if_full).
local function remember()
  redis.call('ZADD', KEYS[#KEYS], FORGET, ID)
  redis.call('ZREMRANGEBYSCORE', KEYS[#KEYS], '-inf', NOW)
  redis.call('PEXPIRE', KEYS[#KEYS], FORGET - NOW)
end
