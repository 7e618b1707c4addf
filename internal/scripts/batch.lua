-- Applies a Batcher's folded submissions to an unsharded board in one
-- script: each submission to its window periods as submit.lua applies one
-- (every window worked out before the first write, so that a refused one
-- leaves all of its windows untouched), one after another, and reports
-- each one's standings before and after. A submission Redis refuses (a
-- total out of range) is reported and skipped, and so are its member's
-- later submissions in the batch ('later'), which the caller writes after
-- it again in their order; the others are written.
--
-- KEYS      the window periods the batch writes (all in the board's hash
--           slot), then the board's data hash
-- ARGV      the whole header (common.lua: its time slot, id and data
--           unused), then per submission: member, value (as submit.lua
--           takes it), its time slot, its data ('' to leave it), the number
--           n of its window periods, then n pairs of a key's index in KEYS
--           and that period's absolute expiry in unix ms ('0' for none)
--
-- Returns per submission 'ok' and six values a window period (see
-- window_reply in writes.lua; no stored value, no rank and no members for
-- a period Redis deleted as its expiry was set), the refusal's code and
-- key alone, or 'later' alone.
write_header()
local dkey = KEYS[#KEYS]
-- A batch whose first submission changes nothing would set an expiry
-- before its first write that may grow memory (see refuse_if_full).
refuse_if_full(KEYS[1])
local out = {}
-- Each period's member count, read once and kept up to date by the
-- batch's writes (a new member adds one), and the value a write stored:
-- so a write costs its ZSCORE, its ranks and its ZADD, no more.
local cards = {}
-- The periods whose expiry the batch set: once a key is enough, every
-- write to a period carrying the same expiry. A period Redis deleted as its
-- expiry was set (its clock past it: the board's clock behind the
-- server's; see expire_gone in writes.lua) is marked gone and written no
-- more, so that no later write of the batch makes it again without an
-- expiry; its windows reply as closed.
local expired, gone = {}, {}
-- The members with a refused submission: their later ones wait for it.
local later = {}
-- The write's member, its periods' keys and expiries, their stored values
-- and what it stores: one set of tables for every write (entries 1..n of
-- the write at hand are the ones read; see work_out).
local member
local ks, exps, prev, store = {}, {}, {}, {}
local function read(j)
  return redis.call('ZSCORE', ks[j], member), ks[j]
end
local at, nargs = REST, #ARGV
while at <= nargs do
  local value, data, n
  member, value, data, n = ARGV[at], ARGV[at + 1], ARGV[at + 3], num(ARGV[at + 4])
  TSLOT = num(ARGV[at + 2])
  for j = 1, n do
    ks[j], exps[j] = KEYS[num(ARGV[at + 3 + 2 * j])], ARGV[at + 4 + 2 * j]
  end
  at = at + 5 + 2 * n

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
    if data ~= '' then redis.call('HSET', dkey, member, data) end
    for j = 1, n do
      local key, p = ks[j], prev[j]
      local prank = 0
      if p then prank = rank_of(key, member, p) end
      local card = cards[key] or redis.call('ZCARD', key)
      local v, rank = p, prank -- unchanged: its rank too
      if store[j] and not gone[key] then
        redis.call('ZADD', key, store[j], member)
        v = store[j]
        if not p then card = card + 1 end
      end
      cards[key] = card
      if not expired[key] then
        expired[key] = true
        gone[key] = expire_gone(key, exps[j])
      end
      if gone[key] then
        closed_reply(out)
      else
        if store[j] then rank = rank_of(key, member, v) end
        window_reply(out, p, prank, v, rank, card, worse_comp(key, v))
      end
    end
  end
end
return out
