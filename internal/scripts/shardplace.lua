-- The one-node sharded writes (after shardwrites.lua and shardof.lua):
-- shard_local.lua and shard_local_many.lua, which reach every shard of a
-- window in one script.

-- Places member in the shards of one window period on one node, whose
-- sorted set for shard i is KEYS[base + i]: value v into shard to (-1:
-- none), out of shard from (-1: none), and with sweep out of every other
-- shard too (a copy a Rebuild in progress or a crashed Cluster-mode write
-- left; Remove and Check's repairs sweep). Each shard it writes gets the
-- period's expiry exp; the others keep theirs, the same absolute time, set
-- when they were written. cards, when given, are the shards' member
-- counts, kept up to date.
--
-- The put comes first, so that Redis refuses the script whole over
-- maxmemory (see refuse_if_full in writes.lua); a ZREM before it would
-- let the write past the limit.
local function place(base, nshards, member, v, to, from, sweep, exp, cards)
  if to >= 0 then
    local z = base + to
    local d = redis.call('ZADD', KEYS[z], v, member)
    expire(exp, z, z)
    if cards then cards[to] = cards[to] + d end
  end
  for i = 0, nshards - 1 do
    local z = base + i
    if i ~= to and (i == from or sweep) and redis.call('ZREM', KEYS[z], member) == 1 then
      expire(exp, z, z)
      if cards then cards[i] = cards[i] - 1 end
    end
  end
end
