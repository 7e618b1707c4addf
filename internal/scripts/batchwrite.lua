
-- A Batcher's write, worked out before it writes (batch.lua,
-- shard_batch.lua): each of its n window periods' stored value, read by
-- read(j) (which also names the period's key), into prev[j], and what the
-- write stores there into store[j] (nil: unchanged); it returns nil, or,
-- when a period refuses the write (a total out of range), the refusal's
-- code and key: then nothing of it may be written, and prev and store
-- hold only part of it.
-- The caller passes the same prev and store for every write of its batch,
-- and the same read (a closure over its loop's member): the tables and
-- the closure made anew for each write were a quarter of a batch's time
-- in Redis (BENCHMARKS.md, "a batch's script without a table a write").
local function work_out(n, value, read, prev, store)
  for j = 1, n do
    local p, key = read(j)
    prev[j] = p
    local v, code = apply(p, value)
    if v == false then return code .. ' ' .. key end
    store[j] = v
  end
  return nil
end
