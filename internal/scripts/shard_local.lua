-- Submit on a sharded board whose keys all live on one node (standalone or
-- Sentinel Redis, where slots do not bind a script): the index and every
-- shard in one script, one round trip, atomically. On a Cluster the same
-- work takes shard_index.lua and shard_write.lua, two round trips.
--
-- KEYS      per window: index, index versions, then per shard its sorted
--           set and version hash (2 + 2 * shards keys a window); with an
--           id, then the board's id set
-- ARGV      the whole header (common.lua), then member, value (as in
--           submit.lua), 10^decimals of the tie-break ('1' for none), the
--           number of shards, the shards - 1 bounds, and one absolute expiry
--           per window ('0' for none)
--
-- Returns what submit.lua returns, six values per window, for the board as
-- a whole: previous stored value or nil, previous rank, stored value, rank,
-- members, members strictly worse (-1 when not competition); then 1 when
-- the id was seen before and nothing was written, else 0.
write_header()
local r = REST
local member, value = ARGV[r], ARGV[r + 1]
local scale, nshards = num(ARGV[r + 2]), num(ARGV[r + 3])
local bounds = {}
for i = 1, nshards - 1 do bounds[i] = num(ARGV[r + 3 + i]) end
local firstexp = r + 3 + nshards
local per = 2 + 2 * nshards
local nk = #KEYS
local nw = math.floor(nk / per)
local id = ID
local dup = false
if id ~= '' then
  dup = seen_before(KEYS[nk])
end
local high, slots = HIGH, SLOTS

-- The shard of a stored value: the number of bounds at or below its plain
-- score; shards are numbered from 0 as in Go.
local function shard_of(v)
  local p = num(v)
  if slots > 0 then p = split(p, slots) / scale end
  local n = 0
  for i = 1, #bounds do
    if bounds[i] <= p then n = n + 1 end
  end
  return n
end

local function better_shard(i, j)
  if high then return i > j end
  return i < j
end

-- The board-wide rank of member inside shard s, and (competition) the members
-- strictly worse.
local function standing(w, s)
  local key = KEYS[w + 2 + 2 * s]
  local v = redis.call('ZSCORE', key, member)
  local rank, worst = rank_of(key, member, v), worse_comp(key, v)
  for i = 0, nshards - 1 do
    if i ~= s then
      local c = redis.call('ZCARD', KEYS[w + 2 + 2 * i])
      if better_shard(i, s) then
        rank = rank + c
      elseif COMP then
        worst = worst + c
      end
    end
  end
  return rank, worst
end

-- Every window is worked out before the first write.
local prev, store = {}, {}
for k = 1, nw do
  local w = (k - 1) * per + 1
  prev[k] = redis.call('HGET', KEYS[w], member)
  if not dup then
    local v, code = apply(prev[k], value)
    if v == false then return redis.error_reply(code .. ' ' .. KEYS[w]) end
    store[k] = v
  end
end
if id ~= '' and not dup then remember(KEYS[nk]) end

local out = {}
for k = 1, nw do
  local w = (k - 1) * per + 1
  local idx, ver, p = KEYS[w], KEYS[w + 1], prev[k]
  local from, prank = -1, 0
  if p then
    from = shard_of(p)
    if redis.call('ZSCORE', KEYS[w + 2 + 2 * from], member) then
      prank = standing(w, from)
    end
  end
  local v = store[k] or p
  local to = 0
  if v then to = shard_of(v) end
  if dup then
    -- A retry already applied: report the standing, write nothing.
    local rank, worst = 0, -1
    if p and redis.call('ZSCORE', KEYS[w + 2 + 2 * to], member) then
      rank, worst = standing(w, to)
    end
    window_reply(out, p, prank, p, rank, redis.call('HLEN', idx), worst)
  else
  local version = version_of(ver, member)
  if store[k] then
    version = redis.call('HINCRBY', ver, member, 1)
    redis.call('HSET', idx, member, v)
  end
  for i = 0, nshards - 1 do
    local zkey, vkey = KEYS[w + 2 + 2 * i], KEYS[w + 3 + 2 * i]
    if i == to then
      redis.call('ZADD', zkey, v, member)
      redis.call('HSET', vkey, member, version)
    elseif redis.call('ZSCORE', zkey, member) then
      -- The old shard, or a copy a crashed Cluster-mode write left behind.
      redis.call('ZREM', zkey, member)
      redis.call('HSET', vkey, member, version)
    end
  end
  local exp = ARGV[firstexp + k - 1]
  if exp ~= '0' then
    redis.call('PEXPIREAT', idx, exp)
    redis.call('PEXPIREAT', ver, exp)
    for i = 0, nshards - 1 do
      redis.call('PEXPIREAT', KEYS[w + 2 + 2 * i], exp)
      redis.call('PEXPIREAT', KEYS[w + 3 + 2 * i], exp)
    end
  end
  local rank, worst = standing(w, to)
  window_reply(out, p, prank, v, rank, redis.call('HLEN', idx), worst)
  end
end
if dup then out[#out + 1] = 1 else out[#out + 1] = 0 end
return out
