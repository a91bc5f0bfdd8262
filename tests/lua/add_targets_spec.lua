-- Listing a directory for `:BB7Add <dir>` runs no program: a cloned repository can lay a
-- directory out as a bare git repository whose config makes git run a command. The listing
-- reads the ignore files itself and still leaves out what git would ignore.
local t = require("helpers.assert")
local targets = require("bb7.add_targets")

local function write(root, rel, lines)
  local path = root .. "/" .. rel
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  vim.fn.writefile(lines, path)
end

local function relative(root, paths)
  return vim.tbl_map(function(p)
    return p:sub(#root + 2)
  end, paths)
end

describe("add targets", function()
  local root
  before_each(function()
    root = vim.fn.resolve(vim.fn.tempname())
    vim.fn.mkdir(root, "p")
  end)

  it("a directory laid out as a bare repository with core.fsmonitor runs nothing", function()
    local marker = root .. "/RAN"
    vim.fn.mkdir(root .. "/.git", "p")
    write(root, "docs/HEAD", { "ref: refs/heads/main" })
    write(root, "docs/config", {
      "[core]",
      "\trepositoryformatversion = 0",
      "\tbare = false",
      "\tworktree = .",
      "\tfsmonitor = touch " .. marker,
    })
    write(root, "docs/objects/info/keep", { "" })
    write(root, "docs/refs/heads/keep", { "" })
    write(root, "docs/guide.md", { "read me" })
    local ran = {}
    local system = vim.system
    vim.system = function(cmd, ...)
      table.insert(ran, cmd)
      return system(cmd, ...)
    end
    local ok, listing = pcall(targets.directory, root .. "/docs")
    vim.system = system
    t.truthy(ok, listing)
    t.eq({}, ran, "no program is run to list a directory")
    t.eq(nil, vim.uv.fs_stat(marker), "the repository's fsmonitor command never ran")
    local names = vim.tbl_map(function(f)
      return f.abs:sub(#root + 2)
    end, listing.files)
    t.truthy(vim.tbl_contains(names, "docs/guide.md"), vim.inspect(names))
  end)

  it("honours .gitignore at every level, negation, directory rules and info/exclude", function()
    vim.fn.mkdir(root .. "/.git/info", "p")
    vim.fn.writefile({ "*.secret" }, root .. "/.git/info/exclude")
    write(root, ".gitignore", { "# comment", "*.log", "!keep.log", "build/", "/top-only.txt", "**/gen/*.rs" })
    write(root, "src/.gitignore", { "local.txt" })
    for _, rel in ipairs({
      "src/a.lua",
      "src/debug.log",
      "src/keep.log",
      "src/build/out.o",
      "src/local.txt",
      "src/top-only.txt",
      "top-only.txt",
      "src/gen/x.rs",
      "src/x.secret",
      "src/.hidden",
      "other/local.txt",
    }) do
      write(root, rel, { "x" })
    end
    t.eq(
      { "src/.gitignore", "src/.hidden", "src/a.lua", "src/keep.log", "src/top-only.txt" },
      relative(root, targets.files_under(root .. "/src"))
    )
    t.eq(
      { ".gitignore", "other/local.txt", "src/.gitignore", "src/.hidden", "src/a.lua", "src/keep.log", "src/top-only.txt" },
      relative(root, targets.files_under(root))
    )
  end)

  it("outside a work tree leaves hidden entries out, and never lists links, FIFOs or .bb7", function()
    write(root, "a.txt", { "x" })
    write(root, ".env", { "TOKEN=1" })
    write(root, ".bb7/chats/c/chat.json", { "{}" })
    vim.uv.fs_symlink(root .. "/.env", root .. "/link.txt")
    vim.fn.system({ "mkfifo", root .. "/pipe" })
    local listing = targets.directory(root)
    t.eq({ "a.txt" }, relative(root, vim.tbl_map(function(f)
      return f.abs
    end, listing.files)))
  end)
end)
