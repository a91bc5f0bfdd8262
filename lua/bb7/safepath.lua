-- Paths and files the user did not choose (a repository's files, a chat's context entries, the
-- model's output paths) handled as data: read only when they are regular files, never through
-- a link where a link could swap in another file, never more than a bound, and never turned
-- into Ex command text. Everything in the plugin that opens or shows such a path calls here.
local uv = vim.uv or vim.loop

local M = {}

--- The most a checked read takes in: past this the file is refused, not read (context files
--- are at most 1 MiB; outputs can be larger).
M.MAX_BYTES = 16 * 1024 * 1024

-- Linux's O_NOFOLLOW, which libuv does not export: the opened file is then the one lstat saw,
-- not a link swapped in meanwhile. Elsewhere the dev/ino comparison after opening catches it.
local NOFOLLOW = ({ x86_64 = 0x20000, i686 = 0x20000, i386 = 0x20000, aarch64 = 0x8000, arm64 = 0x8000 })[
  (uv.os_uname() or {}).machine or ""
]
local function open_flags(follow)
  local flags = (uv.constants and uv.constants.O_NONBLOCK) or 0x800
  if not follow and jit and jit.os == "Linux" and NOFOLLOW then
    flags = bit.bor(flags, NOFOLLOW)
  end
  return flags -- O_RDONLY is 0
end

-- Bidirectional overrides and isolates: they reorder what is shown around them.
local BIDI = {
  ["\226\128\170"] = "\\u{202a}",
  ["\226\128\171"] = "\\u{202b}",
  ["\226\128\172"] = "\\u{202c}",
  ["\226\128\173"] = "\\u{202d}",
  ["\226\128\174"] = "\\u{202e}",
  ["\226\129\166"] = "\\u{2066}",
  ["\226\129\167"] = "\\u{2067}",
  ["\226\129\168"] = "\\u{2068}",
  ["\226\129\169"] = "\\u{2069}",
}

--- Whether `text` holds a control character (C0, DEL or a UTF-8 encoded C1 such as U+0085).
function M.has_control(text)
  return text:find("[%z\1-\31\127]") ~= nil or text:find("\194[\128-\159]") ~= nil
end

--- `text` with its control characters and bidirectional overrides written out (`\n`, `\x1b`,
--- `\u{85}`, `\u{202e}`): one line that shows what the name holds and does nothing else.
function M.inert(text)
  local escaped = text:gsub("\\", "\\\\")
  escaped = escaped:gsub("[%z\1-\31\127]", function(c)
    local named = ({ ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" })[c]
    return named or string.format("\\x%02x", c:byte())
  end)
  escaped = escaped:gsub("\194([\128-\159])", function(c)
    return string.format("\\u{%x}", c:byte())
  end)
  escaped = escaped:gsub("\226[\128\129][\166-\174]", function(c)
    return BIDI[c] or c
  end)
  return escaped
end

--- Why `path` may not be opened in a buffer, or nil: a file name with control characters is
--- shown as text only.
function M.refusal(path)
  if M.has_control(path) then
    return "the file name holds control characters"
  end
  return nil
end

local KIND = {
  link = "a symbolic link (not followed)",
  directory = "a directory",
  fifo = "a FIFO",
  char = "a device",
  block = "a device",
  socket = "a socket",
}

local function too_large(max)
  if max >= 1024 * 1024 then
    return string.format("it is larger than %d MiB", math.floor(max / (1024 * 1024)))
  end
  return string.format("it is larger than %d bytes", max)
end

local function kind(stat)
  return KIND[stat.type] or ("not a regular file (" .. tostring(stat.type) .. ")")
end

--- The content of regular file `abs`, read without blocking and at most `opts.max` bytes
--- (M.MAX_BYTES): nil and why otherwise ("missing" when it does not exist). With
--- `opts.follow` a link is followed (a file the user named); without, a link is refused and
--- the file opened is checked to be the one looked at.
function M.read(abs, opts)
  opts = opts or {}
  local max = opts.max or M.MAX_BYTES
  local seen, stat_err = (opts.follow and uv.fs_stat or uv.fs_lstat)(abs)
  if not seen then
    if tostring(stat_err):match("^ENOENT") then
      return nil, "missing"
    end
    return nil, tostring(stat_err)
  end
  if seen.type ~= "file" then
    return nil, "it is " .. kind(seen)
  end
  if seen.size > max then
    return nil, too_large(max)
  end
  local fd, open_err = uv.fs_open(abs, open_flags(opts.follow), 0)
  if not fd then
    if tostring(open_err):match("^ELOOP") then
      return nil, "it is " .. KIND.link
    end
    return nil, tostring(open_err)
  end
  local function fail(why)
    uv.fs_close(fd)
    return nil, why
  end
  local opened = uv.fs_fstat(fd)
  if not opened then
    return fail("cannot inspect it")
  end
  if opened.type ~= "file" then
    return fail("it is " .. kind(opened))
  end
  if opened.dev ~= seen.dev or opened.ino ~= seen.ino then
    return fail("it was replaced while it was opened")
  end
  local chunks, total = {}, 0
  while true do
    local data, read_err = uv.fs_read(fd, 65536, total)
    if not data then
      return fail(tostring(read_err))
    end
    if data == "" then
      break
    end
    total = total + #data
    if total > max then
      return fail(too_large(max))
    end
    table.insert(chunks, data)
  end
  uv.fs_close(fd)
  return table.concat(chunks)
end

--- Whether `abs`, a path inside project `root`, is reached from the root without any link
--- (the root itself may be reached through one). Returns true, or false and why.
function M.linkless_inside(root, abs)
  local real_root = uv.fs_realpath(root)
  if not real_root or abs:sub(1, #root + 1) ~= root .. "/" then
    return false, "it is not inside the project"
  end
  local expected = real_root .. abs:sub(#root + 1)
  -- the deepest existing directory decides: a link there leads the file elsewhere
  local probe = abs
  local real = uv.fs_realpath(probe)
  while not real do
    local parent = vim.fs.dirname(probe)
    if parent == probe or #parent <= #root then
      return true -- nothing below the root exists yet
    end
    probe = parent
    real = uv.fs_realpath(probe)
    expected = vim.fs.dirname(expected)
  end
  if real ~= expected then
    return false, "it leads through a symbolic link to " .. M.inert(real)
  end
  return true
end

--- Where context entry `path` is on disk, checked not to lead anywhere else: `path` relative
--- to project `root` has no link in any component, an absolute one (an external file) is not a
--- link itself, and neither names anything but a regular file. Returns the absolute path (also
--- for a file that does not exist), or nil and why.
function M.context_abs(root, path)
  if M.has_control(path) then
    return nil, M.refusal(path)
  end
  local abs = path
  if path:sub(1, 1) ~= "/" then
    abs = root .. "/" .. path
    local inside, why = M.linkless_inside(root, abs)
    if not inside then
      return nil, why
    end
  end
  local stat = uv.fs_lstat(abs)
  if stat and stat.type ~= "file" then
    return nil, "it is " .. kind(stat)
  end
  return abs
end

--- The content of context entry `path` on disk (see M.context_abs, M.read): the text, or nil
--- and why ("missing" when it does not exist).
function M.read_context(root, path)
  local abs, why = M.context_abs(root, path)
  if not abs then
    return nil, why
  end
  return M.read(abs)
end

--- A scratch buffer holding `text` (modelines are never applied to it), named `name` with its
--- control characters written out.
function M.text_buffer(name, text)
  local buf = vim.api.nvim_create_buf(false, true)
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    table.remove(lines)
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  pcall(vim.api.nvim_buf_set_name, buf, M.inert(name))
  return buf
end

--- A buffer holding file `path`, loaded with modelines off (a file the user did not write must
--- not set options), named by the API so no character of the name is read as a command.
--- Returns the buffer, or nil and why.
function M.load_buffer(path)
  local refused = M.refusal(path)
  if refused then
    return nil, refused
  end
  local buf = vim.fn.bufadd(path)
  if not vim.api.nvim_buf_is_loaded(buf) then
    -- set before loading: modelines are applied as the text is read
    vim.bo[buf].modeline = false
  end
  vim.fn.bufload(buf)
  vim.bo[buf].buflisted = true
  return buf
end

--- A new tab showing file `path` (see M.load_buffer). Returns the buffer, or nil and why.
function M.open_in_tab(path)
  local buf, why = M.load_buffer(path)
  if not buf then
    return nil, why
  end
  vim.cmd.tabnew()
  local scratch = vim.api.nvim_get_current_buf()
  vim.api.nvim_win_set_buf(0, buf)
  if scratch ~= buf and vim.api.nvim_buf_is_valid(scratch) and vim.api.nvim_buf_get_name(scratch) == "" then
    pcall(vim.api.nvim_buf_delete, scratch, { force = true })
  end
  return buf
end

return M
