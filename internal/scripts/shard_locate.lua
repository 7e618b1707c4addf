-- Rank and Around on a sharded board whose keys all live on one node: the
-- member's stored value from its partition, its place inside the shard the
-- value belongs to, and every shard's member count, in one script (on a
-- Cluster, shard_read.lua reads each shard).
--
-- KEYS[1]   the member's partition hash; KEYS[2 + i] shard i's sorted set
-- ARGV      the header's board part (common.lua), then the member,
--           10^decimals of the tie-break ('1' for none), and the bounds
--
-- Returns {stored value or nil, its shard (-1 when absent), position in
-- the shard (0-based), members strictly better in the shard, strictly
-- worse in the shard, then every shard's member count}.
local member, scale = ARGV[REST], num(ARGV[REST + 1])
local bounds = {}
for i = REST + 2, #ARGV do bounds[#bounds + 1] = num(ARGV[i]) end
local out = {false, -1, 0, 0, 0}
for i = 2, #KEYS do out[#out + 1] = redis.call('ZCARD', KEYS[i]) end
local v = redis.call('HGET', KEYS[1], member)
if not v then return out end
local s = shard_of(v, bounds, scale)
local key = KEYS[2 + s]
-- The shard's copy: the partition's value, but for a Rebuild swapping
-- keys in one after another.
local sv = redis.call('ZSCORE', key, member)
if not sv then return out end
out[1], out[2], out[3] = sv, s, pos(key, member)
if COMP then
  out[4], out[5] = better(key, sv, HIGH), worse(key, sv)
end
return out
