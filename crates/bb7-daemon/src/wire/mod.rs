//! The wire protocol: one JSON request per stdin line, one JSON reply per stdout line.
//!
//! Every request is declared once in [`requests`] with its fields, its reply and when it
//! may run; [`params`] reads the model-calling requests' fields as the first bb7 does;
//! [`replies`] holds the reply bodies and [`reply`] the [`Reply`] line ([`sorted`] writes it
//! with sorted keys, [`raw_lists`] writes `context_list`'s files straight to text); [`parse`]
//! turns a line into a
//! [`Request`] or the error that answers it; [`error`] is every way a request fails (its
//! text is the `error` reply's `message`). This is the bottom layer: the server, the sends
//! and the session all speak these types.

pub mod error;
pub mod params;
pub mod parse;
pub mod raw_lists;
pub mod replies;
pub mod reply;
pub mod requests;
pub mod sorted;

pub use parse::{MAX_LINE, Rejected, TOO_LARGE, parse_line};
pub use reply::Reply;
pub use requests::{ACTIONS, Concurrency, Request};
