-- SubmitMany, Remove and Check's repairs on a sharded board whose keys all
-- live on one node (standalone or Sentinel Redis): the partitions and the
-- shards of every window in one script, one round trip, atomically, so
-- that nothing can leave the shards behind the partitions on one node. On
-- a Cluster the same work takes part_write.lua and shard_write.lua, two
-- round trips.
--
-- KEYS      per window: every shard's sorted set, then the hash of each
--           partition the members are in (shards + parts keys a window);
--           for 'remove', then each of those partitions' data hash
-- ARGV      the whole header (common.lua), then the mode ('submit',
--           'remove', 'evict' (remove from these periods only, the data
--           kept: RemoveBetween) or 'repair'), 10^decimals of the tie-break ('1' for
--           none), the number of shards, the shards - 1 bounds, the
--           number of partitions (parts), one absolute expiry per window
--           ('0' for none), then per member: its partition (1 to parts),
--           the member, and for 'submit' its value (as in submit.lua); for
--           'evict', then lo and hi (stored bounds, inclusive): a member
--           whose partition's value has left lo..hi since it was read
--           stays
--
-- Every change is worked out before the first write: one total out of
-- range refuses the whole call. 'repair' puts each member's stored value
-- from its partition into the right shard and sweeps every other shard of
-- it (or every shard, when the partition holds no value); 'remove' and
-- 'evict' remove each member from the shard of its partition's value, and
-- sweep every shard only for a member its partition does not hold;
-- 'remove' also deletes the members' data. Returns the number of windows
-- written; 'evict' the number of members it removed, over every window.
write_header()
local r = REST
local mode = ARGV[r]
local scale, nshards = num(ARGV[r + 1]), num(ARGV[r + 2])
local bounds = {}
for i = 1, nshards - 1 do bounds[i] = num(ARGV[r + 2 + i]) end
local nparts = num(ARGV[r + 2 + nshards])
local per = nshards + nparts
local nkeys = #KEYS -- the window periods' keys
if mode == 'remove' then nkeys = nkeys - nparts end
local nw = nkeys / per
local firstexp = r + 3 + nshards
local first = firstexp + nw
local step = 2
if mode == 'submit' then step = 3 end
-- The members' arguments end at last; 'evict' has its bounds after them.
-- One assignment at a time: gopher-lua (miniredis) assigns a multiple
-- assignment's targets as it evaluates its values.
local last, lo, hi = #ARGV, ARGV[#ARGV - 1], ARGV[#ARGV]
if mode == 'evict' then last = last - 2 end

local sweep = mode ~= 'submit'
local plans = {}
for k = 1, nw do
  local w = (k - 1) * per + 1
  local plan = {}
  for j = first, last, step do
    local pk = w + nshards + num(ARGV[j]) - 1
    local part = KEYS[pk]
    local member = ARGV[j + 1]
    local p = redis.call('HGET', part, member)
    local v = p
    if mode == 'submit' then
      local code
      v, code = apply(p, ARGV[j + 2])
      if v == false then return redis.error_reply(code .. ' ' .. part .. ' ' .. member) end
      if v == nil then v = p end
    elseif mode == 'remove' or (mode == 'evict' and (not p or within(p, lo, hi))) then
      v = nil
    end
    plan[#plan + 1] = {pk, member, p, v}
  end
  plans[k] = plan
end

for k = 1, nw do
  local w = (k - 1) * per + 1
  local exp = ARGV[firstexp + k - 1]
  for _, c in ipairs(plans[k]) do
    local pk, member, p, v = c[1], c[2], c[3], c[4]
    if p and same(p, v) and mode == 'evict' then
      -- Left the range since it was read: it stays, untouched.
    elseif not same(p, v) or sweep then
      local from, to = -1, -1
      if p then from = shard_of(p, bounds, scale) end
      if v then to = shard_of(v, bounds, scale) end
      -- 'remove' and 'evict' sweep only a member without a value: on one
      -- node every write is one script over its partition and shards, so
      -- the shard of the partition's value is the one that holds it, and a
      -- sweep of every shard for each member made a piece of
      -- RemoveBetween's several times as long.
      place(w, nshards, member, v, to, from, sweep and (mode == 'repair' or not p), exp)
      part_set(KEYS[pk], member, p, v)
      if v then expire(exp, pk, pk) end
    end
  end
end
if mode == 'remove' then
  for j = first, #ARGV, step do redis.call('HDEL', KEYS[nkeys + num(ARGV[j])], ARGV[j + 1]) end
end
if mode == 'evict' then
  local n = 0
  for k = 1, nw do
    for _, c in ipairs(plans[k]) do
      if c[3] and not c[4] then n = n + 1 end
    end
  end
  return n
end
return nw
