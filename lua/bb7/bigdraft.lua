-- Drafts too long for the daemon: it reads request lines of at most 1 MiB, so a longer draft
-- cannot go with `save_draft`. It is kept in a file of its own under Neovim's state directory,
-- one per chat, and comes back when that chat loads with an empty draft from the daemon.
local jsonfile = require("bb7.jsonfile")

local M = {}

local told = {} -- chat id -> true once the user was told where the draft is

--- The file holding the long draft of `chat_id`.
function M.path(chat_id)
  return vim.fn.stdpath("state") .. "/bb7/drafts/" .. tostring(chat_id):gsub("[^%w_-]", "_") .. ".json"
end

--- Whether `text` fits in one `save_draft` request.
function M.fits(text)
  local line = vim.json.encode({ action = "save_draft", request_id = "9999999999", draft = text })
  return #line <= require("bb7.client").MAX_LINE
end

--- Keeps `text` as the long draft of `chat_id`; true, or nil and a message.
function M.keep(chat_id, text)
  local ok, err = jsonfile.write(M.path(chat_id), { draft = text })
  if not ok then
    return nil, err
  end
  if not told[chat_id] then
    told[chat_id] = true
    require("bb7.notify").warn(
      "The draft is over the daemon's 1 MiB: kept in " .. M.path(chat_id) .. " (shorten it to send it)"
    )
  end
  return true
end

--- The long draft kept for `chat_id`, or nil.
function M.take(chat_id)
  local data = jsonfile.read(M.path(chat_id), nil)
  return type(data) == "table" and type(data.draft) == "string" and data.draft or nil
end

--- The draft to send the daemon for `chat_id` when the user's is `text`: `text` itself when it
--- fits (any long draft kept before is forgotten), else "" with `text` kept here. nil and a
--- message when it can be neither.
function M.outgoing(chat_id, text)
  if M.fits(text) then
    M.drop(chat_id)
    return text
  end
  local kept, err = M.keep(chat_id, text)
  if not kept then
    return nil, err
  end
  return ""
end

--- Forgets the long draft of `chat_id` (the draft fits in a request again).
function M.drop(chat_id)
  told[chat_id] = nil
  os.remove(M.path(chat_id))
end

return M
