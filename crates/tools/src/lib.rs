//! Tools that give a model hands which cannot reach anything they should not: the `Tool`
//! trait, the registry, the path sandbox, the built-in tools, bb7's edit algorithms, external
//! tools and the Linux shell sandbox.

pub mod bb7_edit;
