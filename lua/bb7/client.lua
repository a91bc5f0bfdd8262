-- The daemon process: starts it, writes requests as JSON lines, splits its output into lines,
-- routes each reply to the request that asked for it (by `request_id`), and reports async
-- events (`title_updated`) and the daemon's death to whoever listens.
local LineBuffer = require("bb7.linebuf")

local Client = {}
Client.__index = Client

-- Replies that end a `send` stream; everything else with its id (chunk, thinking) continues it.
local STREAM_END = { done = true, diff_error = true, error = true }

-- The daemon reads request lines of at most 1 MiB; a longer one it answers with an error that
-- carries no request id, so the request would wait forever. Such a request is refused here.
Client.MAX_LINE = 1024 * 1024
-- The errors of requests the daemon cannot answer: it is not running, or it died meanwhile.
Client.NOT_RUNNING = "bb7 daemon is not running"
Client.EXITED = "bb7 daemon exited"

--- Whether `reply` is one of those: the daemon, not the request, failed.
function Client.gone(reply)
  return type(reply) == "table" and reply.type == "error" and (reply.message == Client.NOT_RUNNING or reply.message == Client.EXITED)
end
Client.TOO_LARGE = "Request too large (max 1 MiB). Reduce context size or split the request."

--- opts: `cmd` (list), `transport` (see bb7.transport; defaults to vim.system), `log`
--- (`function(direction, line)` for the raw traffic), `on_event(msg)` for messages that answer
--- no request, `on_exit(code, signal, stderr)` when the process ends unasked.
function Client.new(opts)
  opts = opts or {}
  local self = setmetatable({}, Client)
  self.cmd = opts.cmd
  self.transport = opts.transport or require("bb7.transport").system
  self.log = opts.log
  self.on_event = opts.on_event or function() end
  self.on_exit = opts.on_exit or function() end
  self.next_id = 0
  self.pending = {}
  self.handle = nil
  self.stopping = false
  self.stderr_tail = ""
  return self
end

function Client:is_running()
  return self.handle ~= nil
end

--- Starts the process. Returns true, or false and a message.
function Client:start()
  if self.handle then
    return true
  end
  self.lines = LineBuffer.new()
  self.stopping = false
  self.stderr_tail = ""
  local handle, err = self.transport(self.cmd, {
    on_stdout = function(data)
      self:_receive(data)
    end,
    on_stderr = function(data)
      self.stderr_tail = (self.stderr_tail .. data):sub(-2000)
    end,
    on_exit = function(code, signal)
      self:_exited(code, signal)
    end,
  })
  if not handle then
    return false, err or "cannot start the daemon"
  end
  self.handle = handle
  return true
end

--- Sends `{action, request_id, ...fields}`. `on_reply(msg)` gets every message carrying this
--- request's id; with `stream = true` the request stays open until `done`, `diff_error` or
--- `error`. Returns the request id (a string), or nil when the daemon is not running or the
--- request is over `MAX_LINE` (then `on_reply` has had the error).
function Client:request(action, fields, on_reply, stream)
  if not self.handle then
    if on_reply then
      on_reply({ type = "error", message = Client.NOT_RUNNING })
    end
    return nil
  end
  self.next_id = self.next_id + 1
  local id = tostring(self.next_id)
  local msg = vim.tbl_extend("force", fields or {}, { action = action, request_id = id })
  local line = vim.json.encode(msg)
  if #line > Client.MAX_LINE then
    if on_reply then
      on_reply({ type = "error", message = Client.TOO_LARGE })
    end
    return nil
  end
  self.pending[id] = { on_reply = on_reply or function() end, stream = stream == true, action = action }
  if self.log then
    self.log(">", line)
  end
  self.handle.write(line .. "\n")
  return id
end

--- Stops waiting for the request with this id (its later messages go to on_event).
function Client:forget(id)
  if id ~= nil then
    self.pending[id] = nil
  end
end

--- Whether the request with this id is still waiting for its reply or stream end.
function Client:is_pending(id)
  return id ~= nil and self.pending[id] ~= nil
end

function Client:_receive(data)
  for _, line in ipairs(self.lines:feed(data)) do
    self:_dispatch(line)
  end
end

function Client:_dispatch(line)
  if self.log then
    self.log("<", line)
  end
  local ok, msg = pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
  if not ok or type(msg) ~= "table" then
    self.on_event({ type = "protocol_error", message = "unreadable line from bb7: " .. line:sub(1, 200) })
    return
  end
  local id = msg.request_id
  if id ~= nil then
    id = tostring(id)
  end
  local req = id and self.pending[id]
  if not req then
    self.on_event(msg)
    return
  end
  if not req.stream or STREAM_END[msg.type] then
    self.pending[id] = nil
  end
  local cb_ok, err = pcall(req.on_reply, msg)
  if not cb_ok then
    vim.notify("BB-7: internal error handling " .. req.action .. ": " .. tostring(err), vim.log.levels.ERROR)
  end
end

function Client:_exited(code, signal)
  local rest = self.lines and self.lines:flush() or ""
  if rest ~= "" then
    self:_dispatch(rest)
  end
  self.handle = nil
  local pending = self.pending
  self.pending = {}
  for _, req in pairs(pending) do
    pcall(req.on_reply, { type = "error", message = Client.EXITED })
  end
  if not self.stopping then
    self.on_exit(code, signal, self.stderr_tail)
  end
end

--- Stops the process (asks it to shut down, then ends it).
function Client:stop()
  if not self.handle then
    return
  end
  self.stopping = true
  local handle = self.handle
  local line = vim.json.encode({ action = "shutdown", request_id = "shutdown" })
  if self.log then
    self.log(">", line)
  end
  handle.write(line .. "\n")
  handle.stop()
  self.handle = nil
  self.pending = {}
end

return Client
