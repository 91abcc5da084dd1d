-- Headless Neovim (0.7+): start tfcoach-lsp, open a file, write vim.diagnostic.get() as JSON.
-- Arguments come from the environment: TFCOACH_PYTHON, TFCOACH_FILE, TFCOACH_OUT.
local python = os.getenv("TFCOACH_PYTHON")
local file = os.getenv("TFCOACH_FILE")
local out = os.getenv("TFCOACH_OUT")

local client_id = vim.lsp.start_client({
  name = "tfcoach",
  cmd = { python, "-m", "lsp_server" },
  root_dir = vim.fn.fnamemodify(file, ":h"),
  init_options = { debounceMs = 0 },
})

vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
vim.bo[buf].filetype = "python"
vim.lsp.buf_attach_client(buf, client_id)

local ok = vim.wait(30000, function()
  return #vim.diagnostic.get(buf) > 0
end, 50)

local result = { ok = ok, diagnostics = {} }
for _, d in ipairs(vim.diagnostic.get(buf)) do
  local lsp = (d.user_data or {}).lsp or {}
  table.insert(result.diagnostics, {
    lnum = d.lnum,
    col = d.col,
    message = d.message,
    source = d.source,
    code = d.code or lsp.code,
  })
end
local handle = io.open(out, "w")
handle:write(vim.fn.json_encode(result))
handle:close()
vim.lsp.stop_client(client_id)
vim.wait(2000, function()
  return vim.lsp.get_client_by_id(client_id) == nil
end, 50)
vim.cmd("qall!")
