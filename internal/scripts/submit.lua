-- Applies one submission to every live window period of a board, atomically,
-- and reports each window's standing before and after. Used where a MULTI of
-- plain commands cannot do the job: Accumulate (the range check must run
-- before any write), Competition ranks (ZCOUNT needs the stored score), and
-- tie-broken KeepBest under LaterFirst (which compares plain scores).
--
-- KEYS[i]   one sorted set per window period, all in one hash slot
-- ARGV[1]   member
-- ARGV[2]   submitted score as an exact decimal string; with a tie-break,
--           the scaled integer score S
-- ARGV[3]   'GT' | 'LT' (KeepBest), 'SET' (Replace), 'INCR' (Accumulate)
-- ARGV[4]   '1' when higher scores rank first
-- ARGV[5]   '1' for competition ranks (1 + members strictly better)
-- ARGV[6]   tie-break time slots H, '0' for none; then:
-- ARGV[7]   the submission's time slot T
-- ARGV[8]   '1' when the tie part is H-1-T rather than T
-- ARGV[9]   the largest |S| the encoding holds
-- ARGV[9+i] absolute expiry of KEYS[i] in unix milliseconds, '0' for none
--
-- Returns six values per key: previous stored value or nil, previous rank
-- (0 when absent), stored value, rank, members in the set, members strictly
-- worse (-1 when not competition). Stored values travel as strings: Redis
-- would truncate a Lua number in the reply to an integer.
local member, value, policy = ARGV[1], ARGV[2], ARGV[3]
local high, comp = ARGV[4] == '1', ARGV[5] == '1'
local slots = num(ARGV[6])
local nexp = 9

local function rank(key, v)
  if comp then return better(key, v, high, slots) + 1 end
  if high then return redis.call('ZREVRANK', key, member) + 1 end
  return redis.call('ZRANK', key, member) + 1
end

local prev = {}
for i = 1, #KEYS do
  prev[i] = redis.call('ZSCORE', KEYS[i], member)
end

-- What to store in window i; nil to leave it. Every window is worked out
-- before the first write, so a refused submission leaves all untouched.
local store = {}
if slots > 0 then
  local s, t, rev, maxs = num(value), num(ARGV[7]), ARGV[8] == '1', num(ARGV[9])
  local function encode(sc)
    local tie = t
    if rev then tie = slots - 1 - t end
    return fmt(sc * slots + tie)
  end
  for i = 1, #KEYS do
    local p = prev[i]
    if not p or policy == 'SET' then
      store[i] = encode(s)
    elseif policy == 'INCR' then
      local old = split(num(p), slots)
      local total = old + s
      if total > maxs or total < -maxs then
        return redis.error_reply('LBRANGE ' .. KEYS[i])
      end
      store[i] = encode(total)
    else
      -- KeepBest keeps the first time a best was reached: a better score,
      -- or the same score stamped earlier (a replay), replaces it.
      local olds, oldtie = split(num(p), slots)
      local oldt = oldtie
      if rev then oldt = slots - 1 - oldtie end
      local improves = (high and s > olds) or (not high and s < olds)
      if improves or (s == olds and t < oldt) then
        store[i] = encode(s)
      end
    end
  end
elseif policy == 'INCR' then
  local d = num(value)
  for i = 1, #KEYS do
    if prev[i] then
      local t = num(prev[i]) + d
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
  if slots > 0 then
    if store[i] then redis.call('ZADD', key, store[i], member) end
  elseif policy == 'INCR' then
    redis.call('ZINCRBY', key, value, member)
  elseif policy == 'SET' then
    redis.call('ZADD', key, value, member)
  else
    redis.call('ZADD', key, policy, value, member)
  end
  if ARGV[nexp + i] ~= '0' then
    redis.call('PEXPIREAT', key, ARGV[nexp + i])
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
return out
