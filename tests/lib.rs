//! End-to-end tests of the workspace's programs: each test under `e2e/` spawns a real binary
//! (`fake-llm`, `bb7`, `ybs`) as a process and talks to it the way a user or client would.
