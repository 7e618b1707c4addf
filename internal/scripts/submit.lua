-- Applies one submission to every live window period of a board, atomically,
-- and reports each window's standing before and after. Used where a MULTI of
-- plain commands cannot do the job: Accumulate (the range check must run
-- before any write), Competition ranks (ZCOUNT needs the stored score), and
-- tie-broken KeepBest under LaterFirst (which compares plain scores).
--
-- KEYS[i]   one sorted set per window period, all in one hash slot
-- ARGV[1]   member
-- ARGV[2]   submitted score as an exact decimal string; with a tie-break,
--           the scaled integer score
-- ARGV[3]   'GT' | 'LT' (KeepBest), 'SET' (Replace), 'INCR' (Accumulate)
-- ARGV[4]   '1' when higher scores rank first
-- ARGV[5]   '1' for competition ranks (1 + members strictly better)
-- ARGV[6]   tie-break time slots, '0' for none; ARGV[7] the time slot,
-- ARGV[8]   '1' when the tie part is reversed, ARGV[9] the largest |score|
--           (see apply in common.lua)
-- ARGV[10]  idempotency id, '' for none; then the last KEY is the board's
--           id set (id -> unix ms it is forgotten), ARGV[11] now in unix ms,
--           ARGV[12] when this id is to be forgotten, or 'store' when the
--           store reports it applied (see seen_before in common.lua)
-- ARGV[12+i] absolute expiry of KEYS[i] in unix milliseconds, '0' for none
--
-- Returns six values per key: previous stored value or nil, previous rank
-- (0 when absent), stored value, rank, members in the set, members strictly
-- worse (-1 when not competition); then 1 when the id was seen before and
-- nothing was written, else 0. Stored values travel as strings: Redis would
-- truncate a Lua number in the reply to an integer.
local member, value, policy = ARGV[1], ARGV[2], ARGV[3]
local high, comp = ARGV[4] == '1', ARGV[5] == '1'
local slots, t, rev, maxs = num(ARGV[6]), num(ARGV[7]), ARGV[8] == '1', num(ARGV[9])

local id = ARGV[10]
local nk = #KEYS
local dup = false
if id ~= '' then
  dup = seen_before(KEYS[nk], id, ARGV[11], ARGV[12])
  nk = nk - 1
end

local function rank(key, v)
  if comp then return better(key, v, high, slots) + 1 end
  if high then return redis.call('ZREVRANK', key, member) + 1 end
  return redis.call('ZRANK', key, member) + 1
end

-- Every window is worked out before the first write, so a refused
-- submission leaves all of them untouched.
local prev, store = {}, {}
for i = 1, nk do
  prev[i] = redis.call('ZSCORE', KEYS[i], member)
  if not dup then
    local v, code = apply(prev[i], value, policy, high, slots, t, rev, maxs)
    if v == false then return redis.error_reply(code .. ' ' .. KEYS[i]) end
    store[i] = v
  end
end
if id ~= '' and not dup then remember(KEYS[#KEYS], id, ARGV[12]) end

local out = {}
for i = 1, nk do
  local key, p = KEYS[i], prev[i]
  local prank = 0
  if p then prank = rank(key, p) end
  if store[i] then redis.call('ZADD', key, store[i], member) end
  if not dup and ARGV[12 + i] ~= '0' then
    redis.call('PEXPIREAT', key, ARGV[12 + i])
  end
  local v = redis.call('ZSCORE', key, member)
  local w = -1
  if comp then w = worse(key, v, high, slots) end
  local n = #out
  out[n + 1] = p or false
  out[n + 2] = prank
  out[n + 3] = v
  out[n + 4] = rank(key, v)
  out[n + 5] = redis.call('ZCARD', key)
  out[n + 6] = w
end
if dup then out[#out + 1] = 1 else out[#out + 1] = 0 end
return out
