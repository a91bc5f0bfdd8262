//! What the commands share before and after the agent runs.

pub mod exit;
pub mod first_run;
pub mod host;
pub mod images;
pub mod load;
pub mod turn;
