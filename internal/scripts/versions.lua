-- The versions a sharded board keeps per member (see shard_index.lua).

-- The version a hash of versions holds for member, 0 for none.
local function version_of(ver, member)
  return tonumber(redis.call('HGET', ver, member) or '0')
end

