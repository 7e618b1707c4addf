-- Adds many members' values to every live window period of a board at once
-- (SubmitMany under Accumulate). Every sum is checked before the first write,
-- so one total that would overflow to infinity refuses the whole batch.
--
-- KEYS[i]          one sorted set per window period, all in one hash slot
-- ARGV[i]          absolute expiry of KEYS[i] in unix milliseconds, '0' for none
-- ARGV[#KEYS+1..]  member, value, member, value, ...
local nk = #KEYS
local MAXF = 1.7976931348623157e308 -- see submit.lua
local batch = 500 -- members per ZMSCORE: unpack() is bounded by Lua's C stack

for i = 1, nk do
  local key = KEYS[i]
  for j = nk + 1, #ARGV, 2 * batch do
    local members = {}
    for m = j, math.min(j + 2 * batch - 1, #ARGV), 2 do
      members[#members + 1] = ARGV[m]
    end
    local cur = redis.call('ZMSCORE', key, unpack(members))
    for m = 1, #members do
      if cur[m] then
        -- Arithmetic, not tonumber(): see submit.lua.
        local t = (cur[m] + 0) + (ARGV[j + 2 * m - 1] + 0)
        if t > MAXF or t < -MAXF then
          return redis.error_reply('LBOVERFLOW ' .. key .. ' ' .. members[m])
        end
      end
    end
  end
end

for i = 1, nk do
  local key = KEYS[i]
  for j = nk + 1, #ARGV, 2 do
    redis.call('ZINCRBY', key, ARGV[j + 1], ARGV[j])
  end
  if ARGV[i] ~= '0' then
    redis.call('PEXPIREAT', key, ARGV[i])
  end
end
return #KEYS
