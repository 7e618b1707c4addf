-- The sharded write, in pieces: part_write.lua and shard_write.lua apply it
-- in two steps on a Cluster, shard_local.lua and shard_local_many.lua in
-- one script on one node (with shardplace.lua). A window period of a
-- sharded board keeps each member's stored value (the truth the shards are
-- built from) in one of Partitions hashes chosen by a hash of the member,
-- and its copy in the shard its score belongs to.

-- Sets member's stored value in the partition hash part from p to v (nil:
-- delete).
local function part_set(part, member, p, v)
  if same(p, v) then return end
  if v then
    redis.call('HSET', part, member, v)
  else
    redis.call('HDEL', part, member)
  end
end

-- Sets the absolute expiry exp (unix ms; '0' for none) on KEYS[first]
-- to KEYS[last]: keys of one window period.
local function expire(exp, first, last)
  if exp == '0' then return end
  for i = first, last do redis.call('PEXPIREAT', KEYS[i], exp) end
end
