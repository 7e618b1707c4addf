-- Rewrites a period's top mirror (WithHotTop) from the period: its first k
-- entries, when they differ from what the mirror holds (mirror.lua): a
-- script, which reads the period and compares in one step, as a rewrite
-- of an unchanged mirror would invalidate every client's cached copy of
-- it. An unchanged mirror keeps its expiry: it still expires at most the
-- TTL after its content was last written.
--
-- KEYS[1]  the mirror; KEYS[2], ... the period's sorted sets, best first:
--          its own (an unsharded board), or its shards (a sharded board
--          whose keys share one node, where a script reaches them all)
-- ARGV     the header's board part (common.lua), then k, the TTL in ms
--
-- Returns the first k entries: member, value, member, value, ...
local k = num(ARGV[REST])
local top, have = {}, 0
for i = 2, #KEYS do
  if have >= k then break end
  local got = board_range(KEYS[i], 0, k - have - 1)
  for j = 1, #got do top[#top + 1] = got[j] end
  have = have + #got / 2
end
-- The period's data lives as long as the shortest life of its sets (they
-- share one expiry; a missing one holds nothing).
local life = -1
for i = 2, #KEYS do
  local left = redis.call('PTTL', KEYS[i])
  if left >= 0 and (life < 0 or left < life) then life = left end
end
mirror_put(KEYS[1], top, ARGV[REST + 1], ARGV[REST], life)
return top
