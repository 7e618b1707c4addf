-- Submit on a sharded board whose keys all live on one node (standalone or
-- Sentinel Redis, where slots do not bind a script): the member's partition
-- and every shard in one script, one round trip, atomically. On a Cluster
-- the same work takes part_write.lua and shard_write.lua, two round trips.
--
-- KEYS      per window: the member's partition hash, then every shard's
--           sorted set (1 + shards keys a window); with data (the
--           header's), then the partition's data hash; with an id, then the
--           partition's id set
-- ARGV      the whole header (common.lua), then member, value (as in
--           submit.lua), 10^decimals of the tie-break ('1' for none), the
--           number of shards, the shards - 1 bounds, and one absolute expiry
--           per window ('0' for none)
--
-- Returns what submit.lua returns, six values per window, for the board as
-- a whole: previous stored value or nil, previous rank, stored value, rank,
-- members, members strictly worse (-1 when not competition); then 1 when
-- the id was seen before and nothing was written, else 0. A window period
-- Redis deleted as the write set its expiry (see expire_gone) replies with no
-- stored value, no rank and no members.
write_header()
local r = REST
local member, value = ARGV[r], ARGV[r + 1]
local scale, nshards = num(ARGV[r + 2]), num(ARGV[r + 3])
local bounds = {}
for i = 1, nshards - 1 do bounds[i] = num(ARGV[r + 3 + i]) end
local firstexp = r + 3 + nshards
local per = 1 + nshards
local dup, nk = seen_before()
local dkey
dkey, nk = data_key(nk)
local nw = nk / per

-- The members of each shard of the window period whose keys start at
-- KEYS[w], before this call writes; kept up to date as it writes.
local function cards_of(w)
  return shard_cards(w + 1, nshards)
end

-- member's standing with value v in shard s of the window period whose
-- keys start at KEYS[w] (see shard_standing).
local function standing(w, s, v, cards)
  return shard_standing(w + 1, nshards, s, member, v, cards)
end

local function total_of(cards)
  local t = 0
  for i = 0, nshards - 1 do t = t + cards[i] end
  return t
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
-- The data first: the one write whose key was not read above, so that a
-- data key of another type (WRONGTYPE) stops the script before the id is
-- remembered (a retry must not find it) or any score is written.
if not dup then set_data(dkey, member) end
if ID ~= '' and not dup then remember() end

local out = {}
for k = 1, nw do
  local w = (k - 1) * per + 1
  local p = prev[k]
  local cards = cards_of(w)
  local from, pv, prank = -1, nil, 0
  if p then
    from = shard_of(p, bounds, scale)
    pv = redis.call('ZSCORE', KEYS[w + 1 + from], member)
    if pv then prank = standing(w, from, pv, cards) end
  end
  if dup then
    -- A retry already applied: report the standing, write nothing.
    local rank, worst = 0, -1
    if pv then rank, worst = standing(w, from, pv, cards) end
    window_reply(out, p, prank, p, rank, total_of(cards), worst)
  else
    local v = store[k] or p
    local exp = ARGV[firstexp + k - 1]
    local dead = false
    if not same(p, v) or not pv then
      place(w + 1, nshards, member, v, shard_of(v, bounds, scale), from, false, exp, cards)
      part_set(KEYS[w], member, p, v)
      dead = expire_gone(KEYS[w], exp)
    end
    if dead then
      closed_reply(out)
    else
      local rank, worst, total = standing(w, shard_of(v, bounds, scale), v, cards)
      window_reply(out, p, prank, v, rank, total, worst)
    end
  end
end
if dup then out[#out + 1] = 1 else out[#out + 1] = 0 end
return out
