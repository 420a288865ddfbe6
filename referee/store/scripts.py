"""Every Lua script of the referee, in one place (like ``rq/scripts.py``).

Each script touches the keys of ONE hash tag only (one game's, one tournament's, the outbox's, or the one
key ``referee:timers``), so it is atomic and runs on one slot of a Redis Cluster. WRITE_PROJECTION runs on
the "work" Redis (derived data; on a cluster, the cluster), the others on the log Redis. The one exception
are the optional keys of the pending flag's bookkeeping — the index of raised flags ``referee:pending``
(APPEND_ENTRY and CREATE_GAME's KEYS[5], RELEASE_PENDING's KEYS[3], MARK_PENDING's KEYS[2]), the
replay workers' ready list (KEYS[6]) — and APPEND_ENTRY's ``referee:timers`` (KEYS[7]): given only when
the logs are on one plain Redis, never on a cluster, where the store and the dispatcher write them with
separate commands.

Why the hash chain is not computed in Lua: Redis's Lua has SHA-1 (``redis.sha1hex``) but no SHA-256,
and the log's chain is SHA-256 over RFC 8785 bytes. So Python builds the entry and its hash from the
head it expects, and :data:`APPEND_ENTRY` atomically checks that the log is still at exactly that
position (length and head) before it appends; if another submission got there first, nothing is
written and the caller gets the current position. The chain stays correct because an entry is only
ever appended directly after the head it was hashed from.

APPEND_ENTRY — append one sealed entry at an expected position
    KEYS[1]  game:{id}:log      stream (entry at position n has ID 0-(n+1), field "e")
    KEYS[2]  game:{id}:head     hex hash of the last entry
    KEYS[3]  game:{id}:sigs     hash: the signature's first 20 characters (``keys.sig_field``) -> position
                                (duplicate submissions; a field written before issue 28 is the whole signature)
    KEYS[4]  game:{id}:pending  ms timestamp: a replay is on its way or running for this game
    KEYS[5]  optional, with 6 and 7: the index of raised pending flags (``referee:pending``, by the flag's ms)
    KEYS[6]  the game's shard of the replay workers' ready list (``referee:ready:<queue>:<shard>``), pushed
             when ARGV[8] is "1"
    KEYS[7]  ``referee:timers``, set as ARGV[9] says
    ARGV[1]  expected seq (the log length the entry was built for = the entry's position)
    ARGV[2]  expected head (hash of the previous entry; 64 zeros for position 0)
    ARGV[3]  the entry's JSON (RFC 8785)
    ARGV[4]  the entry's hash
    ARGV[5]  the submission's signature, or "" for entries the referee writes itself
    ARGV[6]  now in ms (value of the pending flag)
    ARGV[7]  the game id: indexed and pushed onto the ready list when this append raised the flag
    ARGV[8]  with KEYS[5..7]: "1" to push onto the ready list, "0" not (no replay workers listen)
    ARGV[9]  with KEYS[5..7]: the game's timer after this entry: "" leave it, "-" remove it, or its ms
    returns  {"ok", position, pending_was_set(0|1)}
           | {"stale", seq, head}            the log is elsewhere; nothing written
           | {"duplicate", position, seq, head}  this signature is already in the log; nothing written
           | {"missing"}                     no such game (empty log); nothing written

CREATE_GAME — write the first entry of a new game, and its secret
    KEYS[1]  game:{id}:log
    KEYS[2]  game:{id}:head
    KEYS[3]  game:{id}:secret
    KEYS[4]  game:{id}:pending
    KEYS[5]  optional: the index of raised pending flags
    KEYS[6]  optional (with KEYS[5]): the game's shard of the replay workers' ready list
    ARGV[1]  the ``created`` entry's JSON (RFC 8785)
    ARGV[2]  its hash
    ARGV[3]  server seed as hex, or "" (recorded mode)
    ARGV[4]  now in ms
    ARGV[5]  the game id (indexed, pushed onto the ready list)
    returns  {"ok"} | {"exists"}

RELEASE_PENDING — a replay job that caught up with the log lets go of the game's pending flag
    KEYS[1]  game:{id}:log
    KEYS[2]  game:{id}:pending
    KEYS[3]  optional: the index of raised pending flags (the game leaves it, or is re-scored)
    ARGV[1]  the log length the job has folded and stored
    ARGV[2]  now in ms
    ARGV[3]  the game id
    returns  1: the log is still that long; the flag is gone (the next append queues a new job)
           | 0: the log grew meanwhile; the flag stays (refreshed to now) and the job must go on

MARK_PENDING — raise (or refresh) a game's pending flag: a long fold, the reconciler
    KEYS[1]  game:{id}:pending
    KEYS[2]  optional: the index of raised pending flags
    ARGV[1]  now in ms
    ARGV[2]  the game id

READ_SINCE — a consistent snapshot of a log's tail (read-only)
    KEYS[1]  game:{id}:log
    KEYS[2]  game:{id}:head
    ARGV[1]  stream ID of the first entry wanted (0-(position+1))
    returns  {length, head or false, entry JSON, entry JSON, …}

EMIT_EVENT — put an event into the outbox once (by its stable id)
    KEYS[1]  {outbox}:stream
    KEYS[2]  {outbox}:seen:<event id>
    ARGV[1]  the event's JSON
    ARGV[2]  seconds the id is remembered
    ARGV[3]  approximate cap on the stream's length
    returns  1: added | 0: this id was added before; nothing written

CLAIM_TIMERS — take the due timers for one scheduler: each is pushed to now + lease, so that another
scheduler does not look at the same game meanwhile (the look sets the game's real next timer; a scheduler
that dies leaves the lease to run out, and the game comes due again)
    KEYS[1]  referee:timers
    ARGV[1]  now in ms
    ARGV[2]  at most this many
    ARGV[3]  now + lease in ms
    returns  {game, score, game, score, …} earliest first

WAIT_VERDICT — the verdict of one log position if it is stored; else make sure the game's events stream exists
for the next ``WRITE_PROJECTION`` to wake a ``?wait`` on (it exists only while somebody waits: it expires
ARGV[2] s after the last look, so a live game that nobody waits on keeps no stream)
    KEYS[1]  game:{id}:events    stream (created with one event {seq: -1} if missing)
    KEYS[2]  game:{id}:verdicts  list of JSON verdicts
    ARGV[1]  the position
    ARGV[2]  seconds the stream lives after this look
    returns  {1, verdict JSON} | {0, the stream's last ID}: ``XREAD BLOCK`` after it wakes on the next write

APPEND_MESSAGE — append one sealed message to a game's message stream (``referee.store.messages``) at an
expected position, recording the game's log length then; the chain is hashed in Python as the log's is
    KEYS[1]  game:{id}:messages       stream (message n has ID 0-(n+1), field "e")
    KEYS[2]  game:{id}:messages-head  hex hash of the last message
    KEYS[3]  game:{id}:messages-sigs  hash: signature -> message position (a message posted twice)
    KEYS[4]  game:{id}:log            the game's log: only read (its length, and that the game exists)
    ARGV[1]  expected message count (= the message's position)
    ARGV[2]  expected head (hash of the previous message; "" for the first)
    ARGV[3]  expected log length (the message's ``log_seq``)
    ARGV[4]  the message's JSON
    ARGV[5]  the message's hash
    ARGV[6]  the signature of the message's envelope
    ARGV[7]  the most bytes of stored messages the game may hold (0 or absent: no cap; issue 37)
    returns  {"ok", position}
           | {"full", bytes stored}               this message would take the game over ARGV[7]; nothing written
           | {"stale", count, head, log length}   the stream or the log moved on; nothing written
           | {"duplicate", position}              this signature is in the stream already; nothing written
           | {"missing"}                          no such game (empty log); nothing written

SET_MUTE — replace whom a seat muted, unless a request signed later is stored already
    KEYS[1]  game:{id}:mutes          hash: seat -> JSON {"mute": [seats], "ms": signer's time in ms}
    KEYS[2]  game:{id}:log            the game's log: only read (that the game is still in Redis, not archived)
    ARGV[1]  the seat
    ARGV[2]  the JSON to store
    ARGV[3]  its signer's time in ms
    returns  1: stored | 0: a request signed at that time or later is stored; nothing written
           | -1: no such game in Redis (unknown, or archived); nothing written

CLAIM_REMATCH — name a finished game's rematch once (``POST /games/{id}/rematch``): the first id stored stays
    KEYS[1]  game:{id}:rematch  the rematch's game id
    KEYS[2]  game:{id}:log      only read: the game is in Redis (not archived, not unknown)
    ARGV[1]  the rematch's id to store if none is
    returns  the stored id (this one, or the one stored before) | "" when the game has no log in Redis

TAKE_STREAM_SLOT — one more event stream for a client address, unless it holds the cap already
(``referee.api.stream_slots.StreamSlots``; on the work Redis; issue 37, item 9)
    KEYS[1]  referee:streams:{address}  sorted set: a stream's id -> the end of its lease (ms)
    ARGV[1]  now (ms)
    ARGV[2]  the lease (ms)
    ARGV[3]  the cap
    ARGV[4]  the new stream's id (``<client>:<uuid>`` when the client named itself, else ``<uuid>``)
    ARGV[5]  the client's own id ("" for none): its earlier stream's slot is given to this one (that
             browser closed it: it holds one stream at a time), not counted twice
    returns  1: taken (the key expires with this lease) | 0: the address holds the cap; nothing written
             (either way, the slots whose lease ended before now — a crashed process's — are dropped first)

SAVE_RATINGS — compare-and-set one ruleset's ratings fold (``referee.store.ratings``; on the work Redis)
    KEYS[1]  ratings:{<ruleset>}          hash: "state" (the fold's JSON), "gen" (its generation)
    KEYS[2]  ratings:{<ruleset>}:changes  hash: game -> the JSON of its rating changes
    ARGV[1]  the expected generation
    ARGV[2]  the fold's JSON
    ARGV[3]  "1": replace every change (a rebuild) | "0": add these
    ARGV[4 .. end]  game, change JSON, game, change JSON, …
    returns  the new generation | -1: the stored generation is not the expected one (another process wrote
             first: fold again); nothing written

WRITE_PROJECTION — store what a replay job folded, if nobody stored more meanwhile
    KEYS[1]  game:{id}:proj      hash of projection fields (all strings; JSON where structured)
    KEYS[2]  game:{id}:verdicts  list of JSON verdicts, one per folded entry
    KEYS[3]  game:{id}:events    stream: on success, if it exists (a ``?wait`` is waiting: WAIT_VERDICT made it),
                                 one event {seq} (capped at 1) for that wait to wake on
    KEYS[4]  optional: the set of the games of the projection's status (``referee:status:<status>``), which the
             game joins on success; KEYS[5..] the sets of the other statuses, which it leaves (one plain work
             Redis only: on a cluster the store writes them with separate commands)
    ARGV[1]  mode: "advance" (append verdicts after from_seq) or "replace" (rebuild from scratch)
    ARGV[2]  from_seq: the projection's seq the job started from ("advance" only)
    ARGV[3]  new_seq: the projection's seq after this write
    ARGV[4]  n: number of projection fields that follow
    ARGV[5 .. 4+2n]      field, value, field, value, …
    ARGV[5+2n .. end]    the verdicts of entries from_seq .. new_seq-1, as JSON
    ARGV[end]            with KEYS[4]: the game id (then not a verdict)
    returns  {1, new_seq}  written
           | {0, seq}      the stored projection is already at seq >= new_seq; nothing written
           | {-1, seq}     the stored projection is at another seq than from_seq; nothing written
"""

from __future__ import annotations

APPEND_ENTRY = """
local len = redis.call('XLEN', KEYS[1])
if len == 0 then
  return {'missing'}
end
local head = redis.call('GET', KEYS[2]) or ''
local sig = string.sub(ARGV[5], 1, 20)
if ARGV[5] ~= '' then
  local pos = redis.call('HGET', KEYS[3], sig) or redis.call('HGET', KEYS[3], ARGV[5])
  if pos then
    return {'duplicate', tonumber(pos), len, head}
  end
end
if len ~= tonumber(ARGV[1]) or head ~= ARGV[2] then
  return {'stale', len, head}
end
redis.call('XADD', KEYS[1], '0-' .. (len + 1), 'e', ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[3], sig, len)
end
local flagged = redis.call('SET', KEYS[4], ARGV[6], 'NX')
if KEYS[7] and ARGV[9] ~= '' then
  if ARGV[9] == '-' then
    redis.call('ZREM', KEYS[7], ARGV[7])
  else
    redis.call('ZADD', KEYS[7], ARGV[9], ARGV[7])
  end
end
if flagged then
  if KEYS[5] then
    redis.call('ZADD', KEYS[5], ARGV[6], ARGV[7])
  end
  if KEYS[6] and ARGV[8] == '1' then
    redis.call('LPUSH', KEYS[6], ARGV[7])
  end
  return {'ok', len, 1}
end
return {'ok', len, 0}
"""

CREATE_GAME = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {'exists'}
end
redis.call('XADD', KEYS[1], '0-1', 'e', ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[3], ARGV[3])
end
redis.call('SET', KEYS[4], ARGV[4])
if KEYS[5] then
  redis.call('ZADD', KEYS[5], ARGV[4], ARGV[5])
end
if KEYS[6] then
  redis.call('LPUSH', KEYS[6], ARGV[5])
end
return {'ok'}
"""

RELEASE_PENDING = """
if redis.call('XLEN', KEYS[1]) == tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[2])
  if KEYS[3] then
    redis.call('ZREM', KEYS[3], ARGV[3])
  end
  return 1
end
redis.call('SET', KEYS[2], ARGV[2])
if KEYS[3] then
  redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
end
return 0
"""

MARK_PENDING = """
redis.call('SET', KEYS[1], ARGV[1])
if KEYS[2] then
  redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
end
return 1
"""

READ_SINCE = """
local out = {redis.call('XLEN', KEYS[1]), redis.call('GET', KEYS[2])}
for _, row in ipairs(redis.call('XRANGE', KEYS[1], ARGV[1], '+')) do
  out[#out + 1] = row[2][2]
end
return out
"""

EMIT_EVENT = """
if redis.call('SET', KEYS[2], '1', 'NX', 'EX', tonumber(ARGV[2])) then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', tonumber(ARGV[3]), '*', 'e', ARGV[1])
  return 1
end
return 0
"""

CLAIM_TIMERS = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #due, 2 do
  redis.call('ZADD', KEYS[1], ARGV[3], due[i])
end
return due
"""

WRITE_PROJECTION = """
local mode = ARGV[1]
local from_seq = tonumber(ARGV[2])
local new_seq = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local current = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if mode == 'replace' then
  redis.call('DEL', KEYS[1], KEYS[2])
  from_seq = 0
else
  if current >= new_seq then
    return {0, current}
  end
  if current ~= from_seq or redis.call('LLEN', KEYS[2]) ~= current then
    return {-1, current}
  end
end
local fields = {}
for i = 5, 4 + 2 * n do
  fields[#fields + 1] = ARGV[i]
end
if #fields > 0 then
  redis.call('HSET', KEYS[1], unpack(fields))
end
redis.call('HSET', KEYS[1], 'seq', new_seq)
local first = 5 + 2 * n
local last = #ARGV
if #KEYS > 3 then
  last = last - 1
  redis.call('SADD', KEYS[4], ARGV[#ARGV])
  for i = 5, #KEYS do
    redis.call('SREM', KEYS[i], ARGV[#ARGV])
  end
end
local chunk = {}
for i = first, last do
  chunk[#chunk + 1] = ARGV[i]
  if #chunk == 1000 then
    redis.call('RPUSH', KEYS[2], unpack(chunk))
    chunk = {}
  end
end
if #chunk > 0 then
  redis.call('RPUSH', KEYS[2], unpack(chunk))
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('XADD', KEYS[3], 'MAXLEN', 1, '*', 'seq', new_seq)
end
return {1, new_seq}
"""

WAIT_VERDICT = """
local verdict = redis.call('LINDEX', KEYS[2], ARGV[1])
if verdict then
  return {1, verdict}
end
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local id
if #last == 0 then
  id = redis.call('XADD', KEYS[1], 'MAXLEN', 1, '*', 'seq', -1)
else
  id = last[1][1]
end
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[2]))
return {0, id}
"""

APPEND_MESSAGE = """
local loglen = redis.call('XLEN', KEYS[4])
if loglen == 0 then
  return {'missing'}
end
local pos = redis.call('HGET', KEYS[3], ARGV[6])
if pos then
  return {'duplicate', tonumber(pos)}
end
local len = redis.call('XLEN', KEYS[1])
local head = redis.call('GET', KEYS[2]) or ''
if len ~= tonumber(ARGV[1]) or head ~= ARGV[2] or loglen ~= tonumber(ARGV[3]) then
  return {'stale', len, head, loglen}
end
local bytes = 0
if len > 0 then  -- each message's field "b": the bytes of the stream's messages up to it
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1][2]
  local found = nil
  for i = 1, #last, 2 do if last[i] == 'b' then found = tonumber(last[i + 1]) end end
  if found == nil then  -- messages stored before the count was kept: added up once
    found = 0
    for _, row in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
      for i = 1, #row[2], 2 do if row[2][i] == 'e' then found = found + #row[2][i + 1] end end
    end
  end
  bytes = found
end
local cap = tonumber(ARGV[7] or '0') or 0
if cap > 0 and bytes + #ARGV[4] > cap then
  return {'full', bytes}
end
redis.call('XADD', KEYS[1], '0-' .. (len + 1), 'e', ARGV[4], 'b', bytes + #ARGV[4])
redis.call('SET', KEYS[2], ARGV[5])
redis.call('HSET', KEYS[3], ARGV[6], len)
return {'ok', len}
"""

SET_MUTE = """
if redis.call('XLEN', KEYS[2]) == 0 then
  return -1
end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and tonumber(cjson.decode(old)['ms']) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

SAVE_RATINGS = """
local gen = tonumber(redis.call('HGET', KEYS[1], 'gen') or '0')
if gen ~= tonumber(ARGV[1]) then return -1 end
if ARGV[3] == '1' then redis.call('DEL', KEYS[2]) end
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'gen', gen + 1)
return gen + 1
"""

CLAIM_REMATCH = """
if redis.call('XLEN', KEYS[2]) == 0 then
  return ''
end
local found = redis.call('GET', KEYS[1])
if found then
  return found
end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""

TAKE_STREAM_SLOT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if ARGV[5] ~= '' then
  local prefix = ARGV[5] .. ':'
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    if string.sub(member, 1, #prefix) == prefix then
      redis.call('ZREM', KEYS[1], member)
    end
  end
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""
