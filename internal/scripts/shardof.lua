-- The shard a value belongs to, for the one-node sharded scripts, which
-- reach every shard of a window at once (shard_local.lua,
-- shard_local_many.lua, shard_locate.lua).

-- The shard of a stored value v: the number of bounds at or below its plain
-- score (a composite's score part over scale, 10^decimals of the
-- tie-break); shards are numbered from 0 as in Go.
local function shard_of(v, bounds, scale)
  local p = num(v)
  if SLOTS > 0 then p = split(p, SLOTS) / scale end
  local n = 0
  for i = 1, #bounds do
    if bounds[i] <= p then n = n + 1 end
  end
  return n
end
