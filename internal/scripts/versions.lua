-- The versions of a sharded board's writes on a Cluster, where a write
-- takes two steps: part_write.lua gives each change a version in the
-- member's partition, then shard_write.lua applies it to the shards, each
-- only if it is newer than the last write the shard applied to the member.
-- The shards remember versions only for a minute or so: in two sets of
-- hashes beside each shard that take turns, BUCKET ms each, and expire
-- (each set cut by member into pieces, keys.Recent, whose expiries spread
-- over the last SPREAD ms of their turn, so that Redis frees them a few at
-- a time). A write reaching its shard more than LATE ms after its version
-- was given is refused (the caller gives it a new version and sends it
-- again), so the version of any newer write to the member is still
-- remembered when it comes: the newer write reached the shard after the
-- refused one's version was given, less than LATE ago, and its record
-- lives BUCKET - SPREAD or more. The difference, BUCKET - SPREAD - LATE
-- (15 s), bounds how far the nodes' clocks may disagree.
-- On one node every write is one script, and no versions are kept.
local BUCKET, LATE, SPREAD = 30000, 10000, 5000
-- How many pieces a shard's recent versions are cut into: keys.RecentParts
-- (a test holds them equal); a piece's number ends its key.
local RECENT_PARTS = 1024
-- A version is its partition node's time in ms times TICKS, plus a counter
-- when several writes share a millisecond: exact in a double (2^53) until
-- the year 2248.
local TICKS = 1024

-- Takes k versions from a partition's clock key (the last version given),
-- returning the first: later than any it gave before, and never before
-- this node's time, so that a clock key that expired (five idle minutes)
-- does not give older versions again.
local function next_versions(clock, k)
  local v = math.max(tonumber(redis.call('GET', clock) or '0') + 1, now_ms() * TICKS)
  redis.call('SET', clock, fmt(v + k - 1), 'PX', 300000)
  return v
end

-- The version of the last write a shard applied to member, from its two
-- recent hashes r0 and r1; 0 when neither remembers one.
local function recent_of(r0, r1, member)
  return math.max(tonumber(redis.call('HGET', r0, member) or '0'), tonumber(redis.call('HGET', r1, member) or '0'))
end
