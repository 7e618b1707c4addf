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
local high = HIGH

local function better_shard(i, j)
  if high then return i > j end
  return i < j
end

-- The members of each shard of the window period whose keys start at
-- KEYS[w], before this call writes; kept up to date as it writes.
local function cards_of(w)
  local c = {}
  for i = 0, nshards - 1 do c[i] = redis.call('ZCARD', KEYS[w + 2 + 2 * i]) end
  return c
end

-- The board-wide rank of member, whose value v sits in shard s, and
-- (competition) the members strictly worse: its standing in its shard plus
-- the members of the better (worse) shards.
local function standing(w, s, v, cards)
  local key = KEYS[w + 2 + 2 * s]
  local rank, worst = rank_of(key, member, v), worse_comp(key, v)
  for i = 0, nshards - 1 do
    if i ~= s then
      if better_shard(i, s) then
        rank = rank + cards[i]
      elseif COMP then
        worst = worst + cards[i]
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
  local cards = cards_of(w)
  local from, pv, prank = -1, nil, 0
  if p then
    from = shard_of(p, bounds, scale)
    pv = redis.call('ZSCORE', KEYS[w + 2 + 2 * from], member)
    if pv then prank = standing(w, from, pv, cards) end
  end
  if dup then
    -- A retry already applied: report the standing, write nothing.
    local rank, worst = 0, -1
    if pv then rank, worst = standing(w, from, pv, cards) end
    window_reply(out, p, prank, p, rank, redis.call('HLEN', idx), worst)
  else
    local v = store[k] or p
    local to = shard_of(v, bounds, scale)
    local exp = ARGV[firstexp + k - 1]
    -- The shard it leaves, and any copy a crashed Cluster-mode write or
    -- repair left behind: every other shard is swept.
    place(w + 2, nshards, member, v, index_set(idx, ver, member, p, v), to, from, true, exp, cards)
    expire(exp, w, w + 1)
    local rank, worst = standing(w, to, v, cards)
    window_reply(out, p, prank, v, rank, redis.call('HLEN', idx), worst)
  end
end
if dup then out[#out + 1] = 1 else out[#out + 1] = 0 end
return out
