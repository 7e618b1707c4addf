
-- A Batcher's write, worked out before it writes (batch.lua,
-- shard_batch.lua): each of its n window periods' stored value, read by
-- read(j) (which also names the period's key), and what the write stores
-- there (nil: unchanged). When a period refuses the write (a total out of
-- range), the refusal's code and key: then nothing of it may be written.
local function work_out(n, value, read)
  local prev, store = {}, {}
  for j = 1, n do
    local p, key = read(j)
    prev[j] = p
    local v, code = apply(p, value)
    if v == false then return prev, store, code .. ' ' .. key end
    store[j] = v
  end
  return prev, store, nil
end
