//! The wire protocol: one JSON request per stdin line, one JSON reply per stdout line.
//!
//! Every request is declared once in [`requests`] with its fields, its reply and when it
//! may run; [`params`] reads the model-calling requests' fields as the first bb7 does;
//! [`replies`] holds the reply bodies and [`reply`] the [`Reply`] line ([`sorted`] writes it
//! with sorted keys, [`raw_lists`] writes `context_list`'s files straight to text); [`input`]
//! reads stdin; [`parse`] turns a line into a
//! [`Request`] or the error that answers it; [`error`] is every way a request fails (its
//! text is the `error` reply's `message`). [`server`] is the loop around the session (with
//! what its tasks share in [`shared`]) and [`dispatch`] hands each request to its handler.

pub mod dispatch;
pub mod error;
pub mod input;
pub mod params;
pub mod parse;
pub mod raw_lists;
pub mod replies;
pub mod reply;
pub mod requests;
pub mod server;
pub mod shared;
pub mod sorted;

pub use parse::{MAX_LINE, Rejected, TOO_LARGE, parse_line};
pub use reply::Reply;
pub use requests::{ACTIONS, Concurrency, Request};
