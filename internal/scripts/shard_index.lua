-- The first step of a two-step write to a sharded board (every write on a
-- Cluster; Check's repairs on one node, where Submit, SubmitMany and Remove
-- are one script each): applies submissions to the board's index, the member -> stored value hash that is the truth the
-- shards are built from. The index lives in the board's own slot, so this
-- script serializes every write to a member: no increment or best is lost,
-- whichever shards the member moves between. Each change gets a new version;
-- the shards apply a member's writes only in version order (shard_write.lua).
--
-- KEYS[2w-1], KEYS[2w]  index and version hash of window period w; with
--           an id ('submit' only), then the board's id set
-- ARGV      the whole header (common.lua), then the mode: 'submit', 'remove', or
--           'touch' (a new version for each member, value unchanged:
--           Check's repairs); then per window period its absolute expiry
--           in unix milliseconds ('0' for none); then 'submit': member,
--           value, member, value, ...; else: members
--
-- Returns per window, per member: previous stored value or nil, stored
-- value or nil (removed, or never there), version, members in the index
-- after the whole call (repeated per member for a flat reply); then, with an
-- id, 1 when it was seen before and nothing was written, else 0.
write_header()
local mode = ARGV[REST]
local id = ID
local nk = #KEYS
local dup = false
if id ~= '' then
  dup = seen_before(KEYS[nk])
  nk = nk - 1
end
local nw = nk / 2
local exp = REST -- ARGV[exp + w] is window period w's expiry
local first = exp + nw + 1
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
      v, code = apply(p, ARGV[j + 1])
      if v == false then return redis.error_reply(code .. ' ' .. idx .. ' ' .. member) end
      if v == nil then v = p end
    elseif mode == 'touch' then
      v = p
    end
    plan[#plan + 1] = {member, p, v}
  end
  plans[w] = plan
end
if id ~= '' and not dup then remember(KEYS[#KEYS]) end

local out = {}
for w = 1, nw do
  local idx, ver = KEYS[2 * w - 1], KEYS[2 * w]
  local rows = {}
  for _, c in ipairs(plans[w]) do
    local member, p, v = c[1], c[2], c[3]
    local version = index_set(idx, ver, member, p, v, mode == 'touch')
    rows[#rows + 1] = {p or false, v or false, version}
  end
  if not dup then expire(ARGV[exp + w], 2 * w - 1, 2 * w) end
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
