-- SubmitMany and Remove on a sharded board whose keys all live on one node
-- (standalone or Sentinel Redis): the index and the shards of every window
-- in one script, one round trip, atomically, so that no crash between two
-- steps can leave the shards behind the index. On a Cluster the same work
-- takes shard_index.lua and shard_write.lua, two round trips.
--
-- KEYS      per window: index, index versions, then per shard its sorted
--           set and version hash (2 + 2 * shards keys a window)
-- ARGV      the whole header (common.lua), then the mode ('submit' or
--           'remove'), 10^decimals of the tie-break ('1' for none), the
--           number of shards, the shards - 1 bounds, one absolute expiry
--           per window ('0' for none), then 'submit': member, value (as in
--           submit.lua), member, value, ...; 'remove': members
--
-- Every change is worked out before the first write: one total out of
-- range refuses the whole call. A removal also sweeps every shard of the
-- member's copies (as the two-step Remove does). Returns the number of
-- windows written.
write_header()
local r = REST
local mode = ARGV[r]
local scale, nshards = num(ARGV[r + 1]), num(ARGV[r + 2])
local bounds = {}
for i = 1, nshards - 1 do bounds[i] = num(ARGV[r + 2 + i]) end
local per = 2 + 2 * nshards
local nw = #KEYS / per
local firstexp = r + 2 + nshards
local first = firstexp + nw
local step = 1
if mode == 'submit' then step = 2 end

local plans = {}
for k = 1, nw do
  local idx = KEYS[(k - 1) * per + 1]
  local plan = {}
  for j = first, #ARGV, step do
    local member = ARGV[j]
    local p = redis.call('HGET', idx, member)
    local v = nil
    if mode == 'submit' then
      local code
      v, code = apply(p, ARGV[j + 1])
      if v == false then return redis.error_reply(code .. ' ' .. idx .. ' ' .. member) end
      if v == nil then v = p end
    end
    plan[#plan + 1] = {member, p, v}
  end
  plans[k] = plan
end

for k = 1, nw do
  local w = (k - 1) * per + 1
  local exp = ARGV[firstexp + k - 1]
  for _, c in ipairs(plans[k]) do
    local member, p, v = c[1], c[2], c[3]
    if v ~= p or mode == 'remove' then
      local from, to = -1, -1
      if p then from = shard_of(p, bounds, scale) end
      if v then to = shard_of(v, bounds, scale) end
      -- A removal sweeps every shard, as the two-step Remove does.
      place(w + 2, nshards, member, v, index_set(KEYS[w], KEYS[w + 1], member, p, v), to, from, mode == 'remove', exp)
      expire(exp, w, w + 1)
    end
  end
end
return nw
