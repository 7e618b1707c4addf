-- The second step of a write to a sharded board on a Cluster (see
-- versions.lua and part_write.lua): puts members into, or deletes them
-- from, one shard, each only if its version is newer than the last one the
-- shard applied to that member. Writes that arrive out of order (a slower
-- node, a retry) are ignored, so every shard converges to the partitions
-- whatever order the writes land in; a delete remembers its version for
-- that reason, for as long as a late write may still come.
--
-- KEYS[1]  the shard's sorted set, then for each op the two pieces of its
--          recent versions that hold the op's member (same slot):
--          KEYS[2k] and KEYS[2k+1] for the k-th op
-- ARGV     the header's board part (common.lua), then the absolute expiry
--          in unix milliseconds ('0' for none), then '1' to report ranks
--          ('0': SubmitMany, Remove and repairs, which do not read them),
--          then op, member, version, value ('' unless put or keep), ...;
--          op is 'put', 'del', 'keep' (nothing to write: the member's
--          value did not change; only its ranks are reported, and the
--          shard's copy is checked against value; its version is the
--          partition clock's last as the write's first step left it),
--          'sweep': a delete of a copy a crashed write left behind, which
--          remembers nothing where there is no copy (and never reports
--          ranks), or 'drop': the sweep of a write that changed nothing,
--          which has no version of its own: it deletes a copy no write
--          newer than its version (a keep's) has reached, remembering
--          that version (and never reports ranks)
--
-- Returns per op: 1 when it came too late and was refused (the caller
-- gives it a new version and sends it again), or for a keep when the
-- shard's copy is not at value (a write that died between its two steps
-- left it behind: the caller repairs it), else 0; when reporting and
-- not a sweep, then its rank in the shard before and after (0 when
-- absent; competition: 1 + members strictly better), members strictly
-- worse after (-1 when not competition); then, always, the shard's member
-- count.
local key = KEYS[1]
local exp, report = ARGV[REST], ARGV[REST + 1] == '1'
local now = now_ms()
local bucket = math.floor(now / BUCKET)
-- The pieces written, each given its expiry once.
local remembered = {}

-- member's rank in the shard, 0 when absent: one ZREVRANK (or ZRANK)
-- under ordinal ranks.
local function rank(member)
  if not COMP then
    local p = pos(key, member)
    if p then return p + 1 end
    return 0
  end
  local v = redis.call('ZSCORE', key, member)
  if not v then return 0 end
  return rank_of(key, member, v)
end

local out = {}
for j = REST + 2, #ARGV, 4 do
  local op, member, version, value = ARGV[j], ARGV[j + 1], num(ARGV[j + 2]), ARGV[j + 3]
  local k = 2 * ((j - REST - 2) / 4 + 1)
  local r0, r1 = KEYS[k], KEYS[k + 1]
  local cur = KEYS[k + bucket % 2]
  local reports = report and op ~= 'sweep' and op ~= 'drop'
  local before = 0
  if reports then
    before = rank(member)
  elseif (op == 'sweep' or op == 'drop') and redis.call('ZSCORE', key, member) then
    before = 1
  end
  local late
  if op == 'drop' then
    -- A copy a newer write put here is that write's; an older one was
    -- left behind. Its version remembered, no write older than this
    -- one's first step (whose partition had moved the member away) can
    -- put it back.
    late = false
    if before > 0 and recent_of(r0, r1, member) <= version then
      redis.call('ZREM', key, member)
      redis.call('HSET', cur, member, version)
      remembered[cur] = true
    end
  elseif op == 'keep' then
    -- A copy not at value was left behind by a write that died between
    -- its steps, unless a newer write to the member (a version past the
    -- keep's) has reached the shard since: a write racing this one, whose
    -- copy is the newer.
    local v = redis.call('ZSCORE', key, member)
    late = value ~= '' and not same(v, value) and recent_of(r0, r1, member) <= version
  else
    -- A sweep that finds no copy writes nothing: it is never late (a
    -- large Remove sweeps every shard for each member, and such sweeps
    -- redone as repairs would sweep them all again).
    late = (op ~= 'sweep' or before > 0) and now - math.floor(version / TICKS) > LATE
  end
  -- A sweep where there is no copy reads no versions.
  if op ~= 'keep' and op ~= 'drop' and not late and (op ~= 'sweep' or before > 0) and version > recent_of(r0, r1, member) then
    if op == 'put' then
      redis.call('ZADD', key, value, member)
    else
      redis.call('ZREM', key, member)
    end
    redis.call('HSET', cur, member, version)
    remembered[cur] = true
  end
  if late then out[#out + 1] = 1 else out[#out + 1] = 0 end
  if reports then
    local w = -1
    if COMP then
      local v = redis.call('ZSCORE', key, member)
      if v then w = worse(key, v) end
    end
    out[#out + 1] = before
    out[#out + 1] = rank(member)
    out[#out + 1] = w
  end
end
-- A record lives from BUCKET - SPREAD to twice BUCKET: its piece is
-- emptied (expires) before its turn comes again, the pieces' expiries
-- spread over SPREAD ms by their number (the key's last part).
for cur in pairs(remembered) do
  local piece = tonumber(string.match(cur, ':(%d+)$'))
  redis.call('PEXPIREAT', cur, (bucket + 2) * BUCKET - math.floor(SPREAD * piece / RECENT_PARTS))
end
expire(exp, 1, 1)
out[#out + 1] = redis.call('ZCARD', key)
return out
