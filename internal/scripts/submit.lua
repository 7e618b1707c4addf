-- Applies one submission to every live window period of a board, atomically,
-- and reports each window's standing before and after. Used where a MULTI of
-- plain commands cannot do the job: Accumulate (the overflow check must run
-- before any write) and Competition ranks (ZCOUNT needs the stored score).
--
-- KEYS[i]   one sorted set per window period, all in one hash slot
-- ARGV[1]   member
-- ARGV[2]   submitted score, as an exact decimal string
-- ARGV[3]   'GT' | 'LT' (KeepBest), 'SET' (Replace), 'INCR' (Accumulate)
-- ARGV[4]   '1' when higher scores rank first
-- ARGV[5]   '1' for competition ranks (1 + members strictly better)
-- ARGV[5+i] absolute expiry of KEYS[i] in unix milliseconds, '0' for none
--
-- Returns six values per key: previous score or nil, previous rank (0 when
-- absent), score, rank, members in the set, members strictly worse (-1 when
-- not competition). Scores travel as strings: Redis would truncate a Lua
-- number in the reply to an integer.
local member, score, policy = ARGV[1], ARGV[2], ARGV[3]
local high, comp = ARGV[4] == '1', ARGV[5] == '1'
-- The largest finite double: a sum beyond it is infinite. Not math.huge,
-- which some Lua engines define as this very number.
local MAXF = 1.7976931348623157e308

local function better(key, s)
  if high then return redis.call('ZCOUNT', key, '(' .. s, '+inf') end
  return redis.call('ZCOUNT', key, '-inf', '(' .. s)
end

local function worse(key, s)
  if high then return redis.call('ZCOUNT', key, '-inf', '(' .. s) end
  return redis.call('ZCOUNT', key, '(' .. s, '+inf')
end

local function rank(key, s)
  if comp then return better(key, s) + 1 end
  if high then return redis.call('ZREVRANK', key, member) + 1 end
  return redis.call('ZRANK', key, member) + 1
end

local prev = {}
for i = 1, #KEYS do
  prev[i] = redis.call('ZSCORE', KEYS[i], member)
end

-- Every window is checked before the first write, so a refused submission
-- leaves all of them untouched.
-- Scores become numbers by arithmetic, not tonumber(): both parse every
-- form Redis prints, where some Lua engines' tonumber() refuses "1e+22".
if policy == 'INCR' then
  local d = score + 0
  for i = 1, #KEYS do
    if prev[i] then
      local t = prev[i] + d
      if t > MAXF or t < -MAXF then
        return redis.error_reply('LBOVERFLOW ' .. KEYS[i])
      end
    end
  end
end

local out = {}
for i = 1, #KEYS do
  local key, p = KEYS[i], prev[i]
  local prank = 0
  if p then prank = rank(key, p) end
  if policy == 'INCR' then
    redis.call('ZINCRBY', key, score, member)
  elseif policy == 'SET' then
    redis.call('ZADD', key, score, member)
  else
    redis.call('ZADD', key, policy, score, member)
  end
  if ARGV[5 + i] ~= '0' then
    redis.call('PEXPIREAT', key, ARGV[5 + i])
  end
  local s = redis.call('ZSCORE', key, member)
  local w = -1
  if comp then w = worse(key, s) end
  local n = #out
  out[n + 1] = p or false
  out[n + 2] = prank
  out[n + 3] = s
  out[n + 4] = rank(key, s)
  out[n + 5] = redis.call('ZCARD', key)
  out[n + 6] = w
end
return out
