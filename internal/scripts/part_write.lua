-- The first step of a write to a sharded board on a Cluster (see
-- versions.lua): applies submissions to the members' partitions, the
-- hashes of stored values that are the truth the shards are built from.
-- Every key of a partition group (32 partitions and their clock) shares
-- one slot, so this script serializes every write to a member: no
-- increment or best is lost, whichever shards the member moves between.
-- Each change gets a version from the group's clock, which orders it in
-- the shards (shard_write.lua). One call takes the members of one or more
-- partitions of one group.
--
-- KEYS      per partition of the call, its hash of each window period,
--           then, with data (the header's, 'submit' only) or for 'remove',
--           its data hash; then the group's clock key; with an id ('submit'
--           of one member only), then its partition's id set
-- ARGV      the whole header (common.lua), then the mode: 'submit',
--           'check' (a dry run of 'submit': it refuses what 'submit'
--           would refuse, and writes nothing), 'remove', 'evict' (remove
--           from these periods only, the data kept: RemoveBetween), or
--           'touch' (a new
--           version for each member, value unchanged: Check's repairs,
--           and a write refused as late);
--           then the number np of partitions in the call, then each one's
--           number of members; then per window period its absolute expiry
--           in unix milliseconds ('0' for none); then the members, the
--           first partition's first: 'submit': member, value, member,
--           value, ...; else: members; for 'evict' then lo and hi (stored
--           bounds, inclusive): a member whose value has left lo..hi since
--           it was read stays, unchanged (version 0)
--
-- Returns per window, per member (in the call's order): previous stored
-- value or nil, stored
-- value or nil (removed, or never there), and the version of the change (0:
-- nothing changed, nothing for the shards to write; 'remove', 'evict' and
-- 'touch' always take one, so that the shards may sweep copies; -1: Redis
-- deleted the period's partition as the write set its expiry, and the
-- period is over: see expire_gone in writes.lua); then,
-- with an id, 1 when it was seen before and nothing was written, else 0;
-- then the group clock's last version as the call left it (a 'keep' in
-- shard_write.lua tells a later write from a lost one by it).
-- 'check' returns an empty array, or the refusal.
write_header()
local mode = ARGV[REST]
local dup, nk = seen_before()
local clock = KEYS[nk]
local np = num(ARGV[REST + 1])
local dry = mode == 'check'
if dry then mode = 'submit' end
local step = 1
if mode == 'submit' then step = 2 end
-- Each partition's keys: its nw period hashes, then its data hash when
-- the call writes data (or removes members, whose data goes too).
local withdata = DATA ~= '' or mode == 'remove'
local per = (nk - 1) / np
local nw = per
if withdata then nw = per - 1 end
local exp = REST + 1 + np -- ARGV[exp + w] is window period w's expiry
local lo, hi = ARGV[#ARGV - 1], ARGV[#ARGV] -- 'evict' only
-- Partition k's members are ARGV[from[k]] .. ARGV[to[k]], step apart.
local from, to = {}, {}
local at = exp + nw + 1
for k = 1, np do
  from[k] = at
  at = at + step * num(ARGV[REST + 1 + k])
  to[k] = at - 1
end

-- Work out every change before the first write: one refused total refuses
-- the whole call.
local plans, changes = {}, 0
for k = 1, np do
  for w = 1, nw do
    local part = KEYS[(k - 1) * per + w]
    local plan = {}
    for j = from[k], to[k], step do
      local member = ARGV[j]
      local p = redis.call('HGET', part, member)
      local v = p
      if not dup and mode == 'submit' then
        local code
        v, code = apply(p, ARGV[j + 1])
        if v == false then return redis.error_reply(code .. ' ' .. part .. ' ' .. member) end
        if v == nil then v = p end
      elseif mode == 'remove' or (mode == 'evict' and (not p or within(p, lo, hi))) then
        v = nil
      end
      -- An evict that leaves its member (out of the range) changes nothing.
      local versioned = not dup and (not same(p, v) or (mode ~= 'submit' and not (mode == 'evict' and p)))
      if versioned then changes = changes + 1 end
      plan[#plan + 1] = {member, p, v, versioned}
    end
    plans[(k - 1) * nw + w] = plan
  end
end
if dry then return {} end
-- The data first: the one write whose key was not read above, so that a
-- data key of another type (WRONGTYPE) stops the script before the id is
-- remembered (a retry must not find it) or a partition is written.
if not dup and mode ~= 'evict' then
  for k = 1, np do
    local dkey = withdata and KEYS[k * per]
    for j = from[k], to[k], step do
      if mode == 'remove' then redis.call('HDEL', dkey, ARGV[j]) else set_data(dkey, ARGV[j]) end
    end
  end
end
if ID ~= '' and not dup then remember() end

local version = 0
if changes > 0 then version = next_versions(clock, changes) end
-- Per window, the call's members in order: partition by partition.
local out = {}
for w = 1, nw do
  for k = 1, np do
    local key, start = KEYS[(k - 1) * per + w], #out
    for _, c in ipairs(plans[(k - 1) * nw + w]) do
      local member, p, v = c[1], c[2], c[3]
      local ver = 0
      if c[4] then
        part_set(key, member, p, v)
        ver, version = version, version + 1
      end
      out[#out + 1] = p or false
      out[#out + 1] = v or false
      out[#out + 1] = ver
    end
    if not dup and expire_gone(key, ARGV[exp + w]) then
      -- Nothing for the shards to write: their keys of the period carry
      -- the same expiry, which Redis's clock has passed.
      for i = start + 1, #out, 3 do out[i], out[i + 1], out[i + 2] = false, false, -1 end
    end
  end
end
if ID ~= '' then
  if dup then out[#out + 1] = 1 else out[#out + 1] = 0 end
end
-- The group's last version: any later write to these members takes a
-- newer one (0 when the clock has expired: nothing is known then).
out[#out + 1] = tonumber(redis.call('GET', clock) or '0')
return out
