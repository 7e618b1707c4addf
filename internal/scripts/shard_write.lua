-- The second step of a two-step write to a sharded board (see
-- shard_index.lua): puts members into, or
-- deletes them from, one shard, each only if its version is newer than the
-- last one the shard applied for that member. Writes that arrive late (a
-- slower node, a retry) are ignored, so every shard converges to the index
-- whatever order the writes land in. A delete leaves its version behind as a
-- tombstone for that reason.
--
-- KEYS[1]  the shard's sorted set, KEYS[2] its version hash (same slot);
-- KEYS[3]  on a single node only: the index's version hash. A put older than
--          the index's version is skipped: on one node Submit writes index
--          and shards at once (shard_local.lua) and leaves no tombstone in
--          the shards the member is not in, which a late put could land in.
-- ARGV     the header's board part (common.lua), then the absolute expiry
--          in unix milliseconds ('0' for none), then '1' to report ranks
--          ('0': SubmitMany, Remove and repairs, which do not read them),
--          then op, member, version, value ('' unless put), ...; op is
--          'put', 'del', or 'sweep': a delete of a copy a crashed write
--          left behind, which leaves no tombstone where there is no copy
--
-- Returns, when reporting, per op: rank in the shard before and after (0
-- when absent; competition: 1 + members strictly better), members strictly
-- worse after (-1 when not competition); then, always, the shard's member
-- count.
local key, ver = KEYS[1], KEYS[2]
local exp, report = ARGV[REST], ARGV[REST + 1] == '1'

local function rank(member)
  local v = redis.call('ZSCORE', key, member)
  if not v then return 0 end
  return rank_of(key, member, v)
end

local out = {}
for j = REST + 2, #ARGV, 4 do
  local op, member, version, value = ARGV[j], ARGV[j + 1], num(ARGV[j + 2]), ARGV[j + 3]
  local before = 0
  if report then
    before = rank(member)
  elseif op == 'sweep' and redis.call('ZSCORE', key, member) then
    before = 1
  end
  local seen = version_of(ver, member)
  local current = version
  if KEYS[3] and op == 'put' then
    current = version_of(KEYS[3], member)
  end
  if version > seen and version >= current and (op ~= 'sweep' or before > 0) then
    if op == 'put' then
      shard_set(key, ver, member, value, version)
    else
      shard_set(key, ver, member, nil, version)
    end
  end
  if report then
    local w = -1
    local v = redis.call('ZSCORE', key, member)
    if v then w = worse_comp(key, v) end
    out[#out + 1] = before
    out[#out + 1] = rank(member)
    out[#out + 1] = w
  end
end
expire(exp, 1, 2)
out[#out + 1] = redis.call('ZCARD', key)
return out
