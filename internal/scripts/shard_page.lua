-- A page of a sharded board whose keys all live on one node, in one
-- script: every shard's count, then the page from the shards it spans (on
-- a Cluster the counts come first, in a round trip of their own). Used for
-- a Page that reads its members' data after (IncludeData), so that it
-- takes two round trips in all.
--
-- KEYS[1 + i]  shard i's sorted set
-- ARGV         the header's board part (common.lua), then the first
--              position (0-based) and the count; or 'cutoff' and a
--              percent: the entry at position ceil(members * percent /
--              100), at least 1 (Cutoff)
--
-- Returns what range.lua returns: {members, first position, the first
-- entry's competition rank (the position + 1 without competition ranks),
-- member, value, member, value, ...}.
local nshards = #KEYS
local cards, total = {}, 0
for i = 0, nshards - 1 do
  cards[i] = redis.call('ZCARD', KEYS[1 + i])
  total = total + cards[i]
end
local start, count
if ARGV[REST] == 'cutoff' then
  start, count = cutoff_position(total, ARGV[REST + 1]) - 1, 1
else
  start, count = num(ARGV[REST]), num(ARGV[REST + 1])
end
local out = {total, start, 0}
slice(out, 1, nshards, cards, start, count, 3)
if out[3] == 0 then out[3] = start + 1 end
return out
