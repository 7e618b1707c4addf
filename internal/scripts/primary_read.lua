-- Reads of one slot, where the writes go: a board with WithReplicaReads
-- sends the reads it needs from the primary (what a write builds on, what
-- Verify, Check and Seal compare) in a MULTI, which the primary refuses
-- whole while it is over its maxmemory (every command queued in a MULTI,
-- reads too); such reads are taken again by this script, sent as EVALSHA,
-- which a client sends to the primary and Redis runs then (primary.go,
-- primaryOnly), as atomically as the MULTI would have. Each reply is the
-- command's in RESP2's forms (a score as a string), which the SDK's
-- decoders take as they take RESP3's.
--
-- KEYS     each read's key, in order
-- ARGV     the header's board part (common.lua; unused), then per read:
--          the number n of its arguments after its key, its command name,
--          then those n arguments
--
-- Returns each read's reply in order; a read Redis refuses (WRONGTYPE) as
-- its error reply, the others as they are.
local out, at = {}, REST
for k = 1, #KEYS do
  local n = num(ARGV[at])
  local cmd = {ARGV[at + 1], KEYS[k]}
  for i = 1, n do
    cmd[#cmd + 1] = ARGV[at + 1 + i]
  end
  at = at + 2 + n
  out[k] = redis.pcall(unpack(cmd))
end
return out
