-- The sharded write, in pieces (after versions.lua): shard_index.lua and
-- shard_write.lua apply it in two steps on a Cluster, shard_local.lua and
-- shard_local_many.lua in one script on one node (with shardplace.lua). A window period of a sharded board has an index
-- (member -> stored value, the truth) with its version hash, and per shard
-- a sorted set with a version hash: the version a shard holds for a member
-- is that of the last write it applied to it, and a delete leaves it
-- behind as a tombstone.

-- Sets member's stored value in the index idx from p to v (nil: delete).
-- A change, or touch (Check's repairs: a new version, value unchanged),
-- takes the member's next version in ver; returns the member's version.
local function index_set(idx, ver, member, p, v, touch)
  if v == p and not touch then return version_of(ver, member) end
  local version = redis.call('HINCRBY', ver, member, 1)
  if v and v ~= p then
    redis.call('HSET', idx, member, v)
  elseif not v and p then
    redis.call('HDEL', idx, member)
  end
  return version
end

-- Writes member's copy in one shard (sorted set zkey, version hash vkey) at
-- version: value v, or, when v is nil, its removal. Returns the change in
-- the shard's member count (1, 0 or -1).
local function shard_set(zkey, vkey, member, v, version)
  local n
  if v then
    n = redis.call('ZADD', zkey, v, member)
  else
    n = -redis.call('ZREM', zkey, member)
  end
  redis.call('HSET', vkey, member, version)
  return n
end

-- Sets the absolute expiry exp (unix ms; '0' for none) on KEYS[first]
-- to KEYS[last]: the keys of one window period.
local function expire(exp, first, last)
  if exp == '0' then return end
  for i = first, last do redis.call('PEXPIREAT', KEYS[i], exp) end
end
