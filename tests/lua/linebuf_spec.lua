local t = require("helpers.assert")
local LineBuffer = require("bb7.linebuf")

describe("line buffer", function()
  it("joins a line split over several chunks", function()
    local lb = LineBuffer.new()
    t.eq({}, lb:feed('{"type":'))
    t.eq({}, lb:feed('"ok","request_'))
    t.eq({ '{"type":"ok","request_id":"1"}' }, lb:feed('id":"1"}\n'))
  end)

  it("returns many lines from one chunk, keeping the unfinished tail", function()
    local lb = LineBuffer.new()
    t.eq({ "a", "b", "c" }, lb:feed("a\nb\nc\nd"))
    t.eq({ "de" }, lb:feed("e\n"))
  end)

  it("drops CR of CRLF, also when the CR and LF arrive in different chunks", function()
    local lb = LineBuffer.new()
    t.eq({ "one", "two" }, lb:feed("one\r\ntwo\r\nthr"))
    t.eq({}, lb:feed("ee\r"))
    t.eq({ "three" }, lb:feed("\n"))
  end)

  it("skips empty lines and keeps a CR inside a line", function()
    local lb = LineBuffer.new()
    t.eq({ "a\rb", "c" }, lb:feed("a\rb\n\n\r\nc\n"))
  end)

  it("splits a stream cut at every byte the same as whole", function()
    local text = '{"a":1}\r\n{"b":"x\\ny"}\n{"c":[1,2]}\n'
    local lb = LineBuffer.new()
    local got = {}
    for i = 1, #text do
      vim.list_extend(got, lb:feed(text:sub(i, i)))
    end
    t.eq({ '{"a":1}', '{"b":"x\\ny"}', '{"c":[1,2]}' }, got)
  end)

  it("flush returns the last line without a newline", function()
    local lb = LineBuffer.new()
    lb:feed("done\nlast\r")
    t.eq("last", lb:flush())
    t.eq("", lb:flush())
  end)
end)
