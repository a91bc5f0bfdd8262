//! What may be left out of the fixed prompt, in order, to fit a small window (a leaf: the
//! agent keeps which steps were taken, and the fitting in `fit` takes them).

/// What may be left out, in order, to make the prompt fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shrink {
    /// The repository map.
    RepoMap,
    /// The project's instruction files.
    Instructions,
    /// ybs's full instructions give way to [`SHORT_BASE`].
    ShortInstructions,
    /// The tools' descriptions are cut to their first sentence, parameters' left out.
    ShortToolDescriptions,
}

impl Shrink {
    pub(super) const ORDER: [Shrink; 4] = [
        Shrink::RepoMap,
        Shrink::Instructions,
        Shrink::ShortInstructions,
        Shrink::ShortToolDescriptions,
    ];

    pub(super) fn said(self) -> &'static str {
        match self {
            Shrink::RepoMap => "the repository map was left out",
            Shrink::Instructions => "the project's instructions (AGENTS.md) were left out",
            Shrink::ShortInstructions => "ybs's instructions were shortened",
            Shrink::ShortToolDescriptions => "the tools' descriptions were shortened",
        }
    }
}
