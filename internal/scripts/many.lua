-- Applies many members' scores to every live window period of a board at
-- once (SubmitMany), where a transaction of ZADDs cannot: Accumulate (every
-- sum is checked before the first write, so one total out of range refuses
-- the whole batch) and tie-broken boards (composites are decoded, compared
-- and re-encoded here).
--
-- KEYS[i]   one sorted set per window period, all in one hash slot
-- ARGV      the header (common.lua; the time slot is the batch's), then per
--           window period its absolute expiry in unix milliseconds ('0' for
--           none), then member, value, member, value, ... (values as in
--           submit.lua)
write_header()
local exp = REST - 1 -- ARGV[exp + i] is KEYS[i]'s expiry
local first = REST + #KEYS -- first member
local batch = 500 -- members per command: unpack() is bounded by Lua's C stack

-- plan[i] lists value, member pairs for ZADD on KEYS[i].
local plan = {}
for i = 1, #KEYS do
  local key, zadd = KEYS[i], {}
  for j = first, #ARGV, 2 * batch do
    local members = {}
    for m = j, math.min(j + 2 * batch - 1, #ARGV), 2 do
      members[#members + 1] = ARGV[m]
    end
    local cur = redis.call('ZMSCORE', key, unpack(members))
    for m = 1, #members do
      local v, code = apply(cur[m], ARGV[j + 2 * m - 1])
      if v == false then return redis.error_reply(code .. ' ' .. key .. ' ' .. members[m]) end
      if v then
        zadd[#zadd + 1] = v
        zadd[#zadd + 1] = members[m]
      end
    end
  end
  plan[i] = zadd
end

-- Every ZADD before the first expiry, so that Redis refuses the script
-- whole over maxmemory (see refuse_if_full in writes.lua).
for i = 1, #KEYS do
  local key, zadd = KEYS[i], plan[i]
  for j = 1, #zadd, 2 * batch do
    redis.call('ZADD', key, unpack(zadd, j, math.min(j + 2 * batch - 1, #zadd)))
  end
end
for i = 1, #KEYS do
  if ARGV[exp + i] ~= '0' then
    redis.call('PEXPIREAT', KEYS[i], ARGV[exp + i])
  end
end
return #KEYS
