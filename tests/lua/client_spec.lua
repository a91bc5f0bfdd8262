local t = require("helpers.assert")
local Client = require("bb7.client")

-- A transport that records writes and lets the test feed stdout and exit by hand.
local function manual()
  local io_ = { written = {} }
  io_.transport = function(cmd, handlers)
    io_.cmd = cmd
    io_.handlers = handlers
    return {
      write = function(data)
        table.insert(io_.written, data)
      end,
      stop = function()
        io_.stopped = true
      end,
    }
  end
  function io_.sent(i)
    return vim.json.decode(io_.written[i])
  end
  return io_
end

describe("client", function()
  it("writes requests as JSON lines with fresh string ids", function()
    local io_ = manual()
    local c = Client.new({ cmd = { "bb7" }, transport = io_.transport })
    t.truthy(c:start())
    local a = c:request("ping", {})
    local b = c:request("context_add", { path = "a.lua", content = "x", readonly = false })
    t.eq("1", a)
    t.eq("2", b)
    t.matches("\n$", io_.written[1])
    t.eq({ action = "ping", request_id = "1" }, io_.sent(1))
    t.eq({ action = "context_add", request_id = "2", path = "a.lua", content = "x", readonly = false }, io_.sent(2))
    t.eq({ "bb7" }, io_.cmd)
  end)

  it("routes out-of-order replies to their requests, numeric ids too", function()
    local io_ = manual()
    local c = Client.new({ transport = io_.transport })
    c:start()
    local got = {}
    c:request("chat_list", {}, function(m)
      got.list = m
    end)
    c:request("version", {}, function(m)
      got.version = m
    end)
    io_.handlers.on_stdout('{"type":"version","request_id":2,"version":"0.1.0"}\n{"type":"chat_list","request_id":"1","chats":[]}\n')
    t.eq("0.1.0", got.version.version)
    t.eq({}, got.list.chats)
    t.falsy(c:is_pending("1"))
    t.falsy(c:is_pending("2"))
  end)

  it("keeps a stream open until done and routes chunks and thinking to it", function()
    local io_ = manual()
    local c = Client.new({ transport = io_.transport })
    c:start()
    local seen = {}
    local other = {}
    local id = c:request("send", { content = "hi" }, function(m)
      table.insert(seen, m.type .. ":" .. (m.content or ""))
    end, true)
    c:request("estimate_tokens", {}, function(m)
      table.insert(other, m.type)
    end)
    local lines = {
      '{"type":"thinking","request_id":"1","content":"hmm"}',
      '{"type":"chunk","request_id":"1","content":"Hel"}',
      '{"type":"token_estimate","request_id":"2","total":5}',
      '{"type":"chunk","request_id":"1","content":"lo"}',
    }
    io_.handlers.on_stdout(table.concat(lines, "\r\n") .. "\r\n")
    t.truthy(c:is_pending(id), "stream still open")
    io_.handlers.on_stdout('{"type":"done","request_id":"1","output_files":[],"usage":{}}\n')
    t.falsy(c:is_pending(id))
    t.eq({ "thinking:hmm", "chunk:Hel", "chunk:lo", "done:" }, seen)
    t.eq({ "token_estimate" }, other)
  end)

  it("ends a stream on diff_error and on error", function()
    for _, kind in ipairs({ "diff_error", "error" }) do
      local io_ = manual()
      local c = Client.new({ transport = io_.transport })
      c:start()
      local last
      local id = c:request("send", { content = "hi" }, function(m)
        last = m.type
      end, true)
      io_.handlers.on_stdout('{"type":"' .. kind .. '","request_id":"1","message":"x","errors":[]}\n')
      t.eq(kind, last)
      t.falsy(c:is_pending(id))
    end
  end)

  it("reports title_updated and other unrequested messages as events", function()
    local io_ = manual()
    local events = {}
    local c = Client.new({ transport = io_.transport, on_event = function(m)
      table.insert(events, m)
    end })
    c:start()
    io_.handlers.on_stdout('{"type":"title_updated","chat_id":"abc","title":"Physics"}\nnot json\n')
    t.eq("title_updated", events[1].type)
    t.eq("Physics", events[1].title)
    t.eq("protocol_error", events[2].type)
    t.eq("unreadable line from bb7: not json", events[2].message)
  end)

  it("fails pending requests and reports the exit when the daemon dies", function()
    local io_ = manual()
    local exit
    local c = Client.new({ transport = io_.transport, on_exit = function(code, signal, stderr)
      exit = { code, signal, stderr }
    end })
    c:start()
    local reply
    c:request("send", { content = "x" }, function(m)
      reply = m
    end, true)
    io_.handlers.on_stderr("panic: boom\n")
    io_.handlers.on_exit(101, 0)
    t.eq({ type = "error", message = "bb7 daemon exited" }, reply)
    t.eq({ 101, 0, "panic: boom\n" }, exit)
    t.falsy(c:is_running())
    local late
    t.eq(nil, c:request("ping", {}, function(m)
      late = m
    end))
    t.eq("bb7 daemon is not running", late.message)
  end)

  it("does not report an exit it asked for", function()
    local io_ = manual()
    local exited = false
    local c = Client.new({ transport = io_.transport, on_exit = function()
      exited = true
    end })
    c:start()
    c:stop()
    t.truthy(io_.stopped)
    t.eq({ action = "shutdown", request_id = "shutdown" }, io_.sent(1))
    io_.handlers.on_exit(0, 0)
    t.falsy(exited)
  end)

  it("logs raw traffic in both directions", function()
    local io_ = manual()
    local log = {}
    local c = Client.new({ transport = io_.transport, log = function(dir, line)
      table.insert(log, dir .. " " .. line)
    end })
    c:start()
    c:request("ping", {})
    io_.handlers.on_stdout('{"type":"ok","request_id":"1"}\n')
    t.eq(2, #log)
    t.eq(">", log[1]:sub(1, 1))
    t.eq({ action = "ping", request_id = "1" }, vim.json.decode(log[1]:sub(3)))
    t.eq('< {"type":"ok","request_id":"1"}', log[2])
  end)

  it("returns the start error of the transport", function()
    local c = Client.new({ transport = function()
      return nil, "ENOENT: no such file"
    end })
    local ok, err = c:start()
    t.falsy(ok)
    t.eq("ENOENT: no such file", err)
  end)
end)

describe("real transport", function()
  it("runs a process through vim.system and reads its lines", function()
    local Client_ = require("bb7.client")
    local got = {}
    local exit
    local c = Client_.new({
      cmd = { "sh", "-c", 'while read -r l; do printf \'{"type":"ok","request_id":"1"}\\r\\n\'; done' },
      on_exit = function(code)
        exit = code
      end,
    })
    t.truthy(c:start())
    c:request("ping", {}, function(m)
      table.insert(got, m.type)
    end)
    t.wait(function()
      return #got == 1
    end, "reply from the child process")
    c.handle.stop()
    t.wait(function()
      return exit ~= nil
    end, "exit")
  end)
end)
