-- The members strictly better than the entry at one position of a sorted
-- set (its competition rank less one), and nothing else: an unsharded
-- board runs it inside a MULTI beside the plain ZRANGE of a page past the
-- first position under competition ranks, so that the page never passes
-- through Lua and the script reads and returns no more than that count
-- needs (BENCHMARKS.md, "a page's first rank by its own script").
--
-- KEYS[1]  the sorted set
-- ARGV     the header's board part (common.lua), then the position before
--          the entry's and the entry's (0-based, the latter at least 1),
--          as decimal integers: passed to ZRANGE as given, as a position
--          past 2^53 would not survive Lua's numbers
--
-- Returns the count (better_after in order.lua); 0 when the set has no
-- entry there.
local items = board_range(KEYS[1], ARGV[REST], ARGV[REST + 1])
if #items < 4 then return 0 end
return better_after(KEYS[1], items, num(ARGV[REST + 1]))
