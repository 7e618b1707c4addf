-- Rank and Around on a sharded board whose keys all live on one node: the
-- member's stored value from its partition, its place inside the shard the
-- value belongs to, every shard's member count, and for Around the slice
-- around it across the shards, in one script (on a Cluster, Rank reads
-- each shard and Around takes a second round trip for the slice).
--
-- KEYS[1]   the member's partition hash; KEYS[2 + i] shard i's sorted set
-- ARGV      the header's board part (common.lua), then the member,
--           10^decimals of the tie-break ('1' for none), the radius ('-1':
--           Rank, no slice), and the bounds
--
-- Returns {stored value or nil, its shard (-1 when absent), position in
-- the shard (0-based), members strictly better in the shard, strictly
-- worse in the shard (competition only), then every shard's member count};
-- for Around, when the member was found, then the slice's first position
-- on the board (0-based), its first entry's competition rank (0 when not
-- competition), and member, value, member, value, ...
local member, scale, radius = ARGV[REST], num(ARGV[REST + 1]), num(ARGV[REST + 2])
local bounds = {}
for i = REST + 3, #ARGV do bounds[#bounds + 1] = num(ARGV[i]) end
local nshards = #KEYS - 1
local out = {false, -1, 0, 0, 0}
local cards = {}
for i = 0, nshards - 1 do
  cards[i] = redis.call('ZCARD', KEYS[2 + i])
  out[#out + 1] = cards[i]
end
local v = redis.call('HGET', KEYS[1], member)
if not v then return out end
local s = shard_of(v, bounds, scale)
local key = KEYS[2 + s]
-- The shard's copy: the partition's value, but for a Rebuild swapping
-- keys in one after another.
local sv = redis.call('ZSCORE', key, member)
if not sv then return out end
local posin = pos(key, member)
out[1], out[2], out[3] = sv, s, posin
if COMP then
  out[4], out[5] = better(key, sv, HIGH), worse(key, sv)
end
if radius < 0 then return out end

-- The member's board position: the shards before its own, best first.
local at, total = 0, 0
for k = 0, nshards - 1 do
  local i = k
  if HIGH then i = nshards - 1 - k end
  if i == s then at = total + posin end
  total = total + cards[i]
end
local count = 2 * radius + 1
local start = math.max(0, math.min(at - radius, total - count))
out[#out + 1] = start
out[#out + 1] = 0
slice(out, 2, nshards, cards, start, count, #out)
return out
