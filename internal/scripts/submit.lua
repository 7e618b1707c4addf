-- Applies one submission to every live window period of a board, atomically,
-- and reports each window's standing before and after. Used where a MULTI of
-- plain commands cannot do the job: an Accumulate whose total must be
-- checked before any write (on a tie-broken board, or an increment of 2^970
-- or more), Competition ranks (ZCOUNT needs the stored score), tie-broken
-- KeepBest under LaterFirst (which compares plain scores), and WithID (the
-- id is checked and recorded with the write).
--
-- KEYS[i]   one sorted set per window period, all in one hash slot; with
--           data (the header's), then the board's data hash; with an id,
--           then the board's id set (id -> unix ms it is forgotten)
-- ARGV      the whole header (common.lua), then member, the submitted value (a
--           score as an exact decimal string; with a tie-break, the scaled
--           integer score), and per window period its absolute expiry in
--           unix milliseconds ('0' for none)
--
-- Returns six values per key (see window_reply in writes.lua); then 1 when
-- the id was seen before and nothing was written, else 0. Stored values
-- travel as strings: Redis would truncate a Lua number in the reply to an
-- integer.
write_header()
local member, value = ARGV[REST], ARGV[REST + 1]
local exp = REST + 1 -- ARGV[exp + i] is KEYS[i]'s expiry

local dup, nk = seen_before()
local dkey
dkey, nk = data_key(nk)

-- Every window is worked out before the first write, so a refused
-- submission leaves all of them untouched.
local prev, store, prank = {}, {}, {}
for i = 1, nk do
  prev[i] = redis.call('ZSCORE', KEYS[i], member)
  if not dup then
    local v, code = apply(prev[i], value)
    if v == false then return redis.error_reply(code .. ' ' .. KEYS[i]) end
    store[i] = v
  end
end
for i = 1, nk do
  prank[i] = 0
  if prev[i] then prank[i] = rank_of(KEYS[i], member, prev[i]) end
end
-- The data first: the one write whose key was not read above, so that a
-- data key of another type (WRONGTYPE) stops the script before the id is
-- remembered (a retry must not find it) or any score is written. The
-- writes that may grow memory all come before the expiries, so that Redis
-- refuses the script whole over maxmemory (see refuse_if_full).
if not dup then set_data(dkey, member) end
if ID ~= '' and not dup then remember() end
for i = 1, nk do
  if store[i] then redis.call('ZADD', KEYS[i], store[i], member) end
end

local out = {}
for i = 1, nk do
  local key, p = KEYS[i], prev[i]
  if not dup and ARGV[exp + i] ~= '0' then
    redis.call('PEXPIREAT', key, ARGV[exp + i])
  end
  local v = redis.call('ZSCORE', key, member)
  local rank = 0
  if v then rank = rank_of(key, member, v) end
  local w = -1
  if v then w = worse_comp(key, v) end
  window_reply(out, p, prank[i], v, rank, redis.call('ZCARD', key), w)
end
if dup then out[#out + 1] = 1 else out[#out + 1] = 0 end
return out
