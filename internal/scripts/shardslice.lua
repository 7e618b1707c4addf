-- Reading a slice of a sharded board across its shards, where every shard
-- is a key of the script (one node).

-- Appends to out the entries at board positions [start, start + count),
-- member, value, member, value, ..., reading the shards KEYS[first + i]
-- (shard i has cards[i] members, 0 <= i < nshards) best first, and sets
-- out[rankat] to the first entry's competition rank (it stays as it is
-- without competition ranks): every member of an earlier shard is strictly
-- better.
local function slice(out, first, nshards, cards, start, count, rankat)
  local offset = 0
  for k = 0, nshards - 1 do
    local i = k
    if HIGH then i = nshards - 1 - k end
    local lo, hi = math.max(start - offset, 0), math.min(start + count - offset, cards[i])
    if lo < hi then
      local key = KEYS[first + i]
      local want = out[rankat] == 0 and COMP
      local items, at, bt = range_better(key, lo, hi - 1, want)
      if want then out[rankat] = 1 + offset + bt end
      for j = at, #items do out[#out + 1] = items[j] end
    end
    offset = offset + cards[i]
  end
end
