-- Remove on an unsharded board that keeps so many readable periods that
-- its MULTI (a ZREM a period) would pass the length rueidis sends on a
-- connection of its dedicated pool (see the board's pipeChunk): the same
-- commands, atomically, as one command.
--
-- KEYS  the periods' sorted sets, then the data hash, then the top
--       mirrors to delete (WithHotTop), if any
-- ARGV  the header's board part (common.lua), then the number of
--       periods, then the members
--
-- Returns 1.
local periods = num(ARGV[REST])
local batch = 500 -- members per command: unpack() is bounded by Lua's C stack
for j = REST + 1, #ARGV, batch do
  local ms = {}
  for i = j, math.min(j + batch - 1, #ARGV) do
    ms[#ms + 1] = ARGV[i]
  end
  for k = 1, periods do
    redis.call('ZREM', KEYS[k], unpack(ms))
  end
  redis.call('HDEL', KEYS[periods + 1], unpack(ms))
end
for k = periods + 2, #KEYS do
  redis.call('UNLINK', KEYS[k])
end
return 1
