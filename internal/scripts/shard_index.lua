-- The first step of every write to a sharded board: applies submissions to
-- the board's index, the member -> stored value hash that is the truth the
-- shards are built from. The index lives in the board's own slot, so this
-- script serializes every write to a member: no increment or best is lost,
-- whichever shards the member moves between. Each change gets a new version;
-- the shards apply a member's writes only in version order (shard_write.lua).
--
-- KEYS[2w-1], KEYS[2w]  index and version hash of window period w
-- ARGV[1]   'submit', 'remove', or 'touch' (a new version for each member,
--           value unchanged: Check's repairs)
-- ARGV[2]   policy, ARGV[3] '1' when higher scores rank first, ARGV[4..7]
--           the tie-break's slots, time slot, reversal and largest |score|
--           (see apply in common.lua)
-- ARGV[8]   idempotency id ('submit' only), '' for none; then the last KEY
--           is the board's id set, ARGV[9] now in unix ms, ARGV[10] when the
--           id is to be forgotten, or 'store' (see seen_before in common.lua)
-- ARGV[10+w] absolute expiry of window period w in unix milliseconds, '0' for none
-- then      'submit': member, value, member, value, ...; else: members
--
-- Returns per window, per member: previous stored value or nil, stored
-- value or nil (removed, or never there), version, members in the index
-- after the whole call (repeated per member for a flat reply); then, with an
-- id, 1 when it was seen before and nothing was written, else 0.
local mode, policy, high = ARGV[1], ARGV[2], ARGV[3] == '1'
local slots, t, rev, maxs = num(ARGV[4]), num(ARGV[5]), ARGV[6] == '1', num(ARGV[7])
local id = ARGV[8]
local nk = #KEYS
local dup = false
if id ~= '' then
  dup = seen_before(KEYS[nk], id, ARGV[9], ARGV[10])
  nk = nk - 1
end
local nw = nk / 2
local first = 10 + nw + 1
local step = 1
if mode == 'submit' then step = 2 end

-- Work out every change before the first write: one refused total refuses
-- the whole call.
local plans = {}
for w = 1, nw do
  local idx = KEYS[2 * w - 1]
  local plan = {}
  for j = first, #ARGV, step do
    local member = ARGV[j]
    local p = redis.call('HGET', idx, member)
    local v, code
    if dup then
      v = p
    elseif mode == 'submit' then
      v, code = apply(p, ARGV[j + 1], policy, high, slots, t, rev, maxs)
      if v == false then return redis.error_reply(code .. ' ' .. idx .. ' ' .. member) end
      if v == nil then v = p end
    elseif mode == 'touch' then
      v = p
    end
    plan[#plan + 1] = {member, p, v}
  end
  plans[w] = plan
end
if id ~= '' and not dup then remember(KEYS[#KEYS], id, ARGV[10]) end

local out = {}
for w = 1, nw do
  local idx, ver = KEYS[2 * w - 1], KEYS[2 * w]
  local rows = {}
  for _, c in ipairs(plans[w]) do
    local member, p, v = c[1], c[2], c[3]
    local version
    if v ~= p or mode == 'touch' then
      version = redis.call('HINCRBY', ver, member, 1)
      if v and v ~= p then
        redis.call('HSET', idx, member, v)
      elseif not v and p then
        redis.call('HDEL', idx, member)
      end
    else
      version = tonumber(redis.call('HGET', ver, member) or '0')
    end
    rows[#rows + 1] = {p or false, v or false, version}
  end
  if not dup and ARGV[10 + w] ~= '0' then
    redis.call('PEXPIREAT', idx, ARGV[10 + w])
    redis.call('PEXPIREAT', ver, ARGV[10 + w])
  end
  local count = redis.call('HLEN', idx)
  for _, r in ipairs(rows) do
    out[#out + 1] = r[1]
    out[#out + 1] = r[2]
    out[#out + 1] = r[3]
    out[#out + 1] = count
  end
end
if id ~= '' then
  if dup then out[#out + 1] = 1 else out[#out + 1] = 0 end
end
return out
