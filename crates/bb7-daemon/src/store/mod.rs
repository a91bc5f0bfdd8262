//! Everything under `.bb7/` and `~/.bb7/`.

pub mod active;
pub mod atomic;
pub mod chats;
pub mod commit;
pub mod confined;
pub mod dirs;
pub mod events;
pub mod global;
pub mod instructions;
pub mod lock;
pub mod logfile;
pub mod model;
pub mod paths;
pub mod recovery;
pub mod trust;
pub mod usage_log;

pub use chats::ChatStore;
