//! What the commands share before and after the agent runs: how they end ([`exit`]: a failure
//! worded for the user, the exit codes), loading the configuration and building the agent
//! ([`load`]), what to say about settings that wait for the user's trust ([`trust`]), the
//! first run's provider choice ([`first_run`]), the model asked for and what the provider
//! says about models ([`model`]), the images of a message
//! ([`images`]), around each turn what it changed, the git baseline, the save and the
//! commit ([`turn`]), and the sessions the ACP and MCP servers run without a terminal
//! ([`headless`]).

pub mod exit;
pub mod first_run;
pub mod headless;
pub mod images;
pub mod load;
pub mod model;
pub mod trust;
pub mod turn;
