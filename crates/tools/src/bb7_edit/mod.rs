//! bb7's file-edit algorithms: `write_file`, search/replace (single and multi) with its five
//! matching passes, anchored edits, `file_id` checks against a base, and all-or-nothing
//! application to a pending buffer. Pure functions: the daemon does the I/O.
