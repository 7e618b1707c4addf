-- Rewrites a sharded Cluster board's top mirror (WithHotTop) with entries
-- its reader read from the shards, which live in other slots than the
-- mirror and so out of a script's reach, unless its turn has passed.
-- A reader takes a turn (INCR of the turn counter) before it reads, and
-- every write that may change the top takes one after it wrote (deleting
-- the mirror, or to rewrite it): the reader whose turn is still the last
-- read after every write that finished before any turn taken since, so
-- the mirror it puts is current. An older reader's put is refused: it may
-- have read before a write that finished since.
--
-- KEYS[1]  the mirror; KEYS[2] its turn counter
-- ARGV     the header's board part (common.lua), then the reader's turn,
--          the TTL in ms, k, the period's expiry (unix ms, as its writes
--          set it on the shards; 0 for none), then the first k entries,
--          member, value, ..., in board order
--
-- Returns 1 when the mirror holds the entries, 0 when the turn had passed.
if redis.call('GET', KEYS[2]) ~= ARGV[REST] then return 0 end
local top = {}
for i = REST + 4, #ARGV do top[#top + 1] = ARGV[i] end
-- The shards' life by this node's clock, which expires them.
local life, expire = -1, num(ARGV[REST + 3])
if expire ~= 0 then life = math.max(expire - now_ms(), 0) end
mirror_put(KEYS[1], top, ARGV[REST + 1], ARGV[REST + 2], life)
return 1
