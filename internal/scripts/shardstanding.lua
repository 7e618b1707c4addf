
-- A member's standing on a sharded board whose keys share one node
-- (shard_local.lua, shard_batch.lua), from the shards' member counts.

-- The members of each shard (0-based) of the window period whose shards
-- are KEYS[base] to KEYS[base + nshards - 1].
local function shard_cards(base, nshards)
  local c = {}
  for i = 0, nshards - 1 do c[i] = redis.call('ZCARD', KEYS[base + i]) end
  return c
end

-- The board-wide rank of member, whose value v sits in shard s of the
-- period whose shards start at KEYS[base], and (competition) the members
-- strictly worse: its standing in its shard plus the members of the
-- better (worse) shards, by cards; and the board's members.
local function shard_standing(base, nshards, s, member, v, cards)
  local key = KEYS[base + s]
  local rank, worst = rank_of(key, member, v), worse_comp(key, v)
  local total = cards[s]
  for i = 0, nshards - 1 do
    if i ~= s then
      total = total + cards[i]
      if (HIGH and i > s) or (not HIGH and i < s) then
        rank = rank + cards[i]
      elseif COMP then
        worst = worst + cards[i]
      end
    end
  end
  return rank, worst, total
end
