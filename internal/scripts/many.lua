-- Applies many members' scores to every live window period of a board at
-- once (SubmitMany), where a transaction of ZADDs cannot: Accumulate (every
-- sum is checked before the first write, so one total out of range refuses
-- the whole batch) and tie-broken boards (composites are decoded, compared
-- and re-encoded here).
--
-- KEYS[i]   one sorted set per window period, all in one hash slot
-- ARGV[1]   'GT' | 'LT' (KeepBest), 'SET' (Replace), 'INCR' (Accumulate)
-- ARGV[2]   tie-break time slots H, '0' for none; then:
-- ARGV[3]   the batch's time slot T
-- ARGV[4]   '1' when the tie part is H-1-T rather than T
-- ARGV[5]   the largest |S| the encoding holds
-- ARGV[5+i] absolute expiry of KEYS[i] in unix milliseconds, '0' for none
-- then      member, value, member, value, ... (values as in submit.lua)
--
-- Without a tie-break only Accumulate comes here: the other policies are a
-- transaction of ZADDs.
local policy, slots = ARGV[1], num(ARGV[2])
local t, rev, maxs = num(ARGV[3]), ARGV[4] == '1', num(ARGV[5])
local nk = #KEYS
local first = 5 + nk + 1 -- first member
local batch = 500 -- members per ZMSCORE: unpack() is bounded by Lua's C stack
local high = policy ~= 'LT'

local function encode(s)
  local tie = t
  if rev then tie = slots - 1 - t end
  return fmt(s * slots + tie)
end

-- plan[i] lists score, member pairs for ZADD on KEYS[i].
local plan = {}
for i = 1, nk do
  local key = KEYS[i]
  local zadd = {}
  for j = first, #ARGV, 2 * batch do
    local members = {}
    for m = j, math.min(j + 2 * batch - 1, #ARGV), 2 do
      members[#members + 1] = ARGV[m]
    end
    local cur = redis.call('ZMSCORE', key, unpack(members))
    for m = 1, #members do
      local value, p = ARGV[j + 2 * m - 1], cur[m]
      local store
      if slots == 0 then
        store = value
        if p then
          local total = num(p) + num(value)
          if total > MAXF or total < -MAXF then
            return redis.error_reply('LBOVERFLOW ' .. key .. ' ' .. members[m])
          end
          store = fmt(total)
        end
      else
        local s = num(value)
        if not p or policy == 'SET' then
          store = encode(s)
        elseif policy == 'INCR' then
          local total = split(num(p), slots) + s
          if total > maxs or total < -maxs then
            return redis.error_reply('LBRANGE ' .. key .. ' ' .. members[m])
          end
          store = encode(total)
        else
          local olds, oldtie = split(num(p), slots)
          local oldt = oldtie
          if rev then oldt = slots - 1 - oldtie end
          if (high and s > olds) or (not high and s < olds) or (s == olds and t < oldt) then
            store = encode(s)
          end
        end
      end
      if store then
        zadd[#zadd + 1] = store
        zadd[#zadd + 1] = members[m]
      end
    end
  end
  plan[i] = zadd
end

for i = 1, nk do
  local key, zadd = KEYS[i], plan[i]
  for j = 1, #zadd, 2 * batch do
    redis.call('ZADD', key, unpack(zadd, j, math.min(j + 2 * batch - 1, #zadd)))
  end
  if ARGV[5 + i] ~= '0' then
    redis.call('PEXPIREAT', key, ARGV[5 + i])
  end
end
return nk
