-- wrk's script for the bench (bench/lib.mjs, `load`): sends the requests of a file in turn, counts the answers by
-- status and prints one JSON line of figures at the end. The file (the script's one argument) holds whole HTTP/1.1
-- requests, each ended by a NUL byte, made by the bench: rotating client addresses, credentials, bodies.
local requests, count, sent = {}, 0, 0
local threads = {}
statuses = {} -- global: `done` reads each thread's with thread:get

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local file = assert(io.open(args[1], "rb"))
  for r in file:read("*a"):gmatch("([^%z]+)%z") do
    count = count + 1
    requests[count] = r
  end
  file:close()
  assert(count > 0, "no requests in " .. args[1])
end

function request()
  sent = sent % count + 1
  return requests[sent]
end

function response(status)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency)
  local counts = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do
      counts[status] = (counts[status] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(counts) do
    parts[#parts + 1] = string.format('"%d":%d', status, n)
  end
  local e = summary.errors
  io.write(string.format(
    'bench-wrk {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"errors":%d,"statuses":{%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, table.concat(parts, ",")))
end
