//! Slash commands.
