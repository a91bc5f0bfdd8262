-- The waiting/streaming spinner under the reply in the preview, with the time since the send
-- (MM:SS), as the first plugin showed it: "⠹ Waiting… 00:03" until the first piece of the reply
-- arrives, "⠼ Streaming… 00:07" after. A virtual line below the buffer's last line, so the
-- streamed text is never touched; redrawn by a timer while the reply runs.
local M = {}

local ns = vim.api.nvim_create_namespace("bb7-spinner")
M.ns = ns

-- The frames and their interval (ms) of the options' `style`.
local function frames()
  local style = require("bb7.config").options.style or {}
  local list = style.spinner_frames
  return (type(list) == "table" and #list > 0) and list or { "⠋" }
end

local function interval()
  local style = require("bb7.config").options.style or {}
  return math.max(tonumber(style.spinner_interval) or 100, 10)
end

local run -- { buf, started, receiving, frame, timer, mark, on_second, second }

--- Milliseconds of a monotonic clock (replaceable in tests).
function M.now()
  return vim.uv.now()
end

--- "MM:SS" for `seconds`.
function M.duration(seconds)
  seconds = math.max(0, math.floor(seconds))
  return string.format("%02d:%02d", math.floor(seconds / 60), seconds % 60)
end

--- Seconds since the send, or nil when no reply runs.
function M.elapsed()
  return run and (M.now() - run.started) / 1000 or nil
end

--- The spinner's text now ("⠋ Waiting… 00:00"), or nil when no reply runs.
function M.text()
  if not run then
    return nil
  end
  local label = run.receiving and "Streaming…" or "Waiting…"
  return string.format("%s %s %s", frames()[run.frame] or frames()[1], label, M.duration(M.elapsed()))
end

local function draw()
  if not run or not vim.api.nvim_buf_is_valid(run.buf) then
    return
  end
  local last = vim.api.nvim_buf_line_count(run.buf) - 1
  local group = run.receiving and "BB7SpinnerStreaming" or "BB7SpinnerWaiting"
  run.mark = vim.api.nvim_buf_set_extmark(run.buf, ns, last, 0, {
    id = run.mark,
    virt_lines = { { { "" } }, { { M.text(), group } } },
  })
end

local function tick()
  if not run then
    return
  end
  run.frame = run.frame % #frames() + 1
  draw()
  local second = math.floor(M.elapsed())
  if second ~= run.second then
    run.second = second
    if run.on_second then
      run.on_second()
    end
  end
end

--- Starts the spinner under the last line of `buf`; `on_second` is called each new second
--- (the status line shows the same time).
function M.start(buf, on_second)
  M.stop()
  run = { buf = buf, started = M.now(), receiving = false, frame = 1, second = 0, on_second = on_second }
  run.timer = vim.uv.new_timer()
  run.timer:start(interval(), interval(), vim.schedule_wrap(tick))
  draw()
end

--- The first piece of the reply arrived (and later ones: the mark follows the last line).
function M.receiving()
  if run then
    run.receiving = true
    draw()
  end
end

--- Whether a reply runs and nothing of it has arrived yet.
function M.waiting()
  return run ~= nil and not run.receiving
end

--- Whether a spinner runs.
function M.running()
  return run ~= nil
end

--- Stops the spinner and removes its line.
function M.stop()
  if not run then
    return
  end
  if run.timer then
    run.timer:stop()
    run.timer:close()
  end
  if vim.api.nvim_buf_is_valid(run.buf) then
    vim.api.nvim_buf_clear_namespace(run.buf, ns, 0, -1)
  end
  run = nil
end

return M
