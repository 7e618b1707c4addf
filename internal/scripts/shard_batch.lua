-- Applies a Batcher's folded submissions to a sharded board whose keys all
-- live on one node, in one script: each submission to its window periods
-- as shard_local.lua applies one (every window worked out before the first
-- write, so that a refused one leaves all of its windows untouched), one
-- after another, and reports each one's standings before and after, as
-- batch.lua does. A submission Redis refuses (a total out of range) is
-- reported and skipped, and so are its member's later submissions in the
-- batch ('later'), which the caller writes after it again in their order;
-- the others are written.
--
-- KEYS      every shard of each window period the batch writes (nshards
--           keys a period), then the other keys the submissions name by
--           index: their partitions' hashes and data hashes
-- ARGV      the whole header (common.lua: its time slot, id and data
--           unused), 10^decimals of the tie-break ('1' for none), the
--           number of shards, the shards - 1 bounds, then per submission:
--           member, value (as shard_local.lua takes it), its time slot,
--           its data ('' to leave it), its data hash's index in KEYS ('0'
--           for none), the number n of its window periods, then n
--           triples: the period's number (1 for the first nshards keys),
--           the index in KEYS of the member's partition hash there, and
--           the period's absolute expiry in unix ms ('0' for none)
--
-- Returns per submission 'ok' and six values a window period (see
-- window_reply in writes.lua; no stored value, no rank and no members for
-- a period Redis deleted as its expiry was set: see expire_gone), the
-- refusal's code and key alone, or 'later' alone.
write_header()
local scale, nshards = num(ARGV[REST]), num(ARGV[REST + 1])
local bounds = {}
for i = 1, nshards - 1 do bounds[i] = num(ARGV[REST + 1 + i]) end
local at = REST + 1 + nshards

-- Each period's shard counts, read once and kept up to date by the
-- batch's writes (place moves them).
local cards = {}
local function cards_at(base)
  if not cards[base] then cards[base] = shard_cards(base, nshards) end
  return cards[base]
end

local out = {}
-- The members with a refused submission: their later ones wait for it.
local later = {}
-- The write's member, its periods' first shard keys, partition hashes and
-- expiries, their stored values and what it stores: one set of tables for
-- every write (entries 1..n of the write at hand are the ones read; see
-- work_out).
local member
local bases, parts, exps, prev, store = {}, {}, {}, {}, {}
local function read(j)
  return redis.call('HGET', KEYS[parts[j]], member), KEYS[parts[j]]
end
local nargs = #ARGV
while at <= nargs do
  local value, data, dk, n
  member, value, data, dk, n = ARGV[at], ARGV[at + 1], ARGV[at + 3], num(ARGV[at + 4]), num(ARGV[at + 5])
  TSLOT = num(ARGV[at + 2])
  for j = 1, n do
    local q = at + 3 + 3 * j
    bases[j], parts[j], exps[j] = (num(ARGV[q]) - 1) * nshards + 1, num(ARGV[q + 1]), ARGV[q + 2]
  end
  at = at + 6 + 3 * n

  local refused
  if not later[member] then
    refused = work_out(n, value, read, prev, store)
  end
  if later[member] then
    out[#out + 1] = 'later'
  elseif refused then
    out[#out + 1] = refused
    later[member] = true
  else
    out[#out + 1] = 'ok'
    if dk > 0 and data ~= '' then redis.call('HSET', KEYS[dk], member, data) end
    for j = 1, n do
      local base, p = bases[j], prev[j]
      local c = cards_at(base)
      local from, pv, prank, pworst, ptotal = -1, nil, 0, nil, nil
      if p then
        from = shard_of(p, bounds, scale)
        pv = redis.call('ZSCORE', KEYS[base + from], member)
        if pv then prank, pworst, ptotal = shard_standing(base, nshards, from, member, pv, c) end
      end
      local v = store[j] or p
      local rank, worst, total = prank, pworst, ptotal -- unchanged: its standing too
      local dead = false
      if not same(p, v) or not pv then
        place(base, nshards, member, v, shard_of(v, bounds, scale), from, false, exps[j], c)
        part_set(KEYS[parts[j]], member, p, v)
        dead = expire_gone(KEYS[parts[j]], exps[j])
        if not dead then
          rank, worst, total = shard_standing(base, nshards, shard_of(v, bounds, scale), member, v, c)
        end
      end
      if dead then
        closed_reply(out)
      else
        window_reply(out, p, prank, v, rank, total, worst)
      end
    end
  end
end
return out
