-- Shared by every script: scripts.go puts this prelude in front of each one,
-- then the libraries the script needs (order.lua, ranks.lua, versions.lua,
-- writes.lua, shardwrites.lua, shardof.lua, shardplace.lua,
-- shardstanding.lua, shardslice.lua, mirror.lua, batchwrite.lua), then the
-- script. A script runs its whole text, the closures of every local
-- function included, on every call: so a script takes only the pieces it
-- uses, and scripts.go cuts from its text every library function it never
-- calls (shake). Only locals: Redis refuses scripts that create
-- globals.

-- The largest finite double: a sum beyond it is infinite. Not math.huge,
-- which some Lua engines (gopher-lua, in miniredis) define as this number.
local MAXF = 1.7976931348623157e308

-- A number as an exact decimal string for a Redis argument. Lua's own
-- tostring keeps only 14 digits.
local function fmt(x)
  return string.format('%.17g', x)
end

-- Arithmetic rather than tonumber(): both accept every form Redis prints a
-- score in, where gopher-lua's tonumber() refuses "1e+22".
local function num(s)
  return s + 0
end

-- Now in unix ms by this node's clock (versions.lua's versions, hot_put.lua's
-- mirror life): a script that calls it needs the ACL's +time.
local function now_ms()
  local t = redis.call('TIME')
  return num(t[1]) * 1000 + math.floor(num(t[2]) / 1000)
end

-- Whether the stored values p and v (strings, or nil for none) are the
-- same: numbers compared, as Redis compares scores. One number reaches a
-- script spelled two ways, "1000002" or "0.10000000000000001" by fmt
-- here and "1.000002e+06" or "0.1" by the Go side's shortest form, so
-- that compared as text a write that changes nothing would count as a
-- change and rewrite its shards.
local function same(p, v)
  if not p or not v then return not p and not v end
  return num(p) == num(v)
end

-- Whether the stored value v lies within lo..hi, stored bounds inclusive
-- as the Go side gives them ('-inf' and '+inf' for open ends): numbers
-- compared, as Redis compares scores.
local function within(v, lo, hi)
  local x = num(v)
  return (lo == '-inf' or (lo ~= '+inf' and x >= num(lo))) and (hi == '+inf' or (hi ~= '-inf' and x <= num(hi)))
end

-- A tie-break composite c = s * slots + tie, 0 <= tie < slots, split back
-- into its parts; exact, as every value involved is an integer below 2^53.
local function split(c, slots)
  local s = math.floor(c / slots)
  local tie = c - s * slots
  if tie < 0 then
    s, tie = s - 1, tie + slots
  elseif tie >= slots then
    s, tie = s + 1, tie - slots
  end
  return s, tie
end

-- Every script's ARGV opens with one header, in this order; the Go side
-- builds it with scripts.Header and nowhere else. Its board part, which
-- every script takes:
--   ARGV[1]   '1' when higher scores rank first
--   ARGV[2]   '1' for competition ranks (1 + members strictly better)
--   ARGV[3]   tie-break time slots, '0' for none
-- and its write part, which only the scripts that apply submissions take
-- (they call write_header first; a read pays for no more arguments than it
-- uses):
--   ARGV[4]   the write's policy: 'GT' | 'LT' (KeepBest), 'SET' (Replace),
--             'INCR' (Accumulate)
--   ARGV[5]   the write's time slot, ARGV[6] '1' when the tie part is
--             reversed, ARGV[7] the largest |scaled score| (see apply
--             in writes.lua)
--   ARGV[8]   WithID id, '' for none; ARGV[9] now in unix ms; ARGV[10]
--             when the id is forgotten, in unix ms, or 'store' (see
--             seen_before in writes.lua)
--   ARGV[11]  the member's data to set (WithData), '' to leave it (see
--             data_key in writes.lua)
-- A script's own arguments start at ARGV[REST].
local HIGH, COMP, SLOTS, REST = ARGV[1] == '1', ARGV[2] == '1', num(ARGV[3]), 4
local POLICY, TSLOT, REV, MAXS, ID, NOW, FORGET, DATA
