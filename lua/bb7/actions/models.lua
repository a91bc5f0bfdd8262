-- Models and reasoning effort: the model list (refreshed when older than a day, or on
-- request), the model and reasoning effort of the active chat.
local common = require("bb7.actions.common")
local notify = require("bb7.notify")
local session = require("bb7.session")
local state = require("bb7.state")
local sync = require("bb7.actions.sync")

local M = {}
local done = common.done

M.EFFORTS = { "none", "low", "medium", "high" }
M.MAX_AGE = 24 * 60 * 60

function M.set_model(model, cb)
  state.data.model = model
  state.emit("status")
  local known = state.data.models
  local listed = not known or #known == 0 or vim.iter(known):any(function(m)
    return m.id == model
  end)
  if listed then
    notify.info("Model " .. model)
  else
    -- still set (a list can miss a model), but a typo no longer waits for the send to fail
    notify.warn(string.format("Model %s is not in the provider's list of %d models: sends may fail", model, #known))
  end
  if not state.data.active_id then
    return done(cb, true)
  end
  session.request("save_chat_settings", { model = model }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("save the model", reply.message)
      return done(cb, false)
    end
    sync.refresh_estimate()
    done(cb, true)
  end)
end

--- The next reasoning effort after `effort` (none -> low -> medium -> high -> none).
function M.next_effort(effort)
  for i, name in ipairs(M.EFFORTS) do
    if name == effort then
      return M.EFFORTS[i % #M.EFFORTS + 1]
    end
  end
  return M.EFFORTS[2]
end

--- Cycles the reasoning effort of the next sends and keeps it with the chat.
function M.cycle_effort(cb)
  local effort = M.next_effort(state.data.reasoning_effort or "none")
  state.data.reasoning_effort = effort
  state.emit("status")
  notify.info("Reasoning effort " .. effort)
  if not state.data.active_id then
    return done(cb, true)
  end
  session.request("save_chat_settings", { reasoning_effort = effort }, function(reply)
    if reply.type == "error" then
      notify.daemon_error("save the reasoning effort", reply.message)
      return done(cb, false)
    end
    done(cb, true)
  end)
end

--- The model list. Fetched once and again when older than a day; `opts.force` always fetches
--- (`:BB7RefreshModels`), `opts.quiet` skips the error notification (the background fetch
--- that only feeds the context counter).
function M.fetch_models(cb, opts)
  if opts == true then
    opts = { quiet = true }
  end
  opts = opts or {}
  local fresh = state.data.models_at and os.time() - state.data.models_at < M.MAX_AGE
  if state.data.models and fresh and not opts.force then
    return done(cb, state.data.models)
  end
  session.request("get_models", {}, function(reply)
    if reply.type ~= "models" then
      if not opts.quiet then
        notify.daemon_error("list models", reply.message)
      end
      return done(cb, state.data.models)
    end
    state.data.models = reply.models or {}
    state.data.models_at = os.time()
    -- the counter depends on the model's context length
    state.emit("chat")
    done(cb, state.data.models)
  end)
end

--- `:BB7RefreshModels`.
function M.refresh_models(cb)
  M.fetch_models(function(models)
    if models and state.data.models_at and os.time() - state.data.models_at < 5 then
      notify.info(string.format("Refreshed models (%d)", #models))
    end
    done(cb, models)
  end, { force = true })
end

--- The context length of the current model, when known.
function M.context_length()
  for _, model in ipairs(state.data.models or {}) do
    if model.id == state.data.model then
      return tonumber(model.context_length)
    end
  end
end

return M
