//! What CI runners need from Quartermaster: live progress in the job log, GitHub's workflow
//! commands (annotations, masks, groups), step outputs and the job summary.

pub(crate) mod github;
pub mod progress;
